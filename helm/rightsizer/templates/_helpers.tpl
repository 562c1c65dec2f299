{{/* Names ------------------------------------------------------------------------------------ */}}

{{- define "rightsizer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The base name of every object: the release name, with the chart's unless it already has it. */}}
{{- define "rightsizer.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "rightsizer.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "rightsizer.labels" -}}
helm.sh/chart: {{ include "rightsizer.chart" . }}
{{ include "rightsizer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "rightsizer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rightsizer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "rightsizer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "rightsizer.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "rightsizer.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{- define "rightsizer.leaseName" -}}
{{- .Values.leaderElection.leaseName | default (printf "%s-leader" (include "rightsizer.fullname" .)) }}
{{- end }}

{{- define "rightsizer.webhookConfigurationName" -}}
{{- .Values.webhook.configurationName | default (include "rightsizer.fullname" .) }}
{{- end }}

{{- define "rightsizer.tlsSecretName" -}}
{{- .Values.tls.existingSecret | default .Values.tls.secretName | default (printf "%s-tls" (include "rightsizer.fullname" .)) }}
{{- end }}

{{- define "rightsizer.certificateName" -}}
{{- printf "%s-serving" (include "rightsizer.fullname" .) }}
{{- end }}

{{- define "rightsizer.databaseSecretName" -}}
{{- .Values.database.postgres.secretName | default (printf "%s-database" (include "rightsizer.fullname" .)) }}
{{- end }}

{{/* The DNS names the API server uses for the Service (the serving certificate covers them all). */}}
{{- define "rightsizer.serviceNames" -}}
{{- $svc := include "rightsizer.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | toJson }}
{{- end }}

{{/* Modes ------------------------------------------------------------------------------------ */}}

{{/*
Where the webhook's certificate comes from, first match wins:
  certManager  certManager.enabled: a cert-manager Certificate fills the Secret
  existing     tls.existingSecret: a Secret you manage (tls.crt, tls.key, ca.crt)
  self         tls.selfManaged: rightsizer creates its CA and certificate in a Secret and renews them
  chart        otherwise: the chart generates a CA and certificate into a Secret at install
*/}}
{{- define "rightsizer.tlsMode" -}}
{{- if .Values.certManager.enabled }}certManager
{{- else if .Values.tls.existingSecret }}existing
{{- else if .Values.tls.selfManaged }}self
{{- else }}chart
{{- end }}
{{- end }}

{{- define "rightsizer.databaseMode" -}}
{{- .Values.database.type }}
{{- end }}

{{- define "rightsizer.sqliteDir" -}}/var/lib/rightsizer{{- end }}

{{/* Where the static token file (auth.mode tokens) is mounted. */}}
{{- define "rightsizer.authDir" -}}/etc/rightsizer/auth{{- end }}

{{/* The certificate directory: the mounted Secret, or an emptyDir rightsizer writes (tls mode "self"). */}}
{{- define "rightsizer.certDir" -}}
{{- if eq (include "rightsizer.tlsMode" .) "self" }}/var/run/rightsizer/certs{{ else }}/etc/rightsizer/tls{{ end }}
{{- end }}

{{/* Where the CA and serving certificate are (ca.crt, tls.crt, tls.key), and for which Service. */}}
{{- define "rightsizer.certEnv" }}
- name: RIGHTSIZER_NAMESPACE
  value: {{ .Release.Namespace | quote }}
- name: RIGHTSIZER_WEBHOOK_SERVICE
  value: {{ include "rightsizer.fullname" . | quote }}
- name: RIGHTSIZER_CERT_DIR
  value: {{ include "rightsizer.certDir" . | quote }}
{{- if eq (include "rightsizer.tlsMode" .) "self" }}
- name: RIGHTSIZER_CERT_SECRET
  value: {{ include "rightsizer.tlsSecretName" . | quote }}
{{- end }}
{{- end }}

{{/*
The chart-made TLS material (tls mode "chart") as JSON: crt, key, ca, caKey (base64 PEM) and the
RFC 3339 expiry of the serving certificate (notAfter) and the CA (caNotAfter). Like app/serving/certs.py:
a CA of tls.chart.caValidityDays (10 years) signs a serving certificate of
tls.chart.certValidityDays (1 year). `existing` is the Secret as it is in the cluster (lookup; empty
on install and offline). Its material is kept, except that a serving certificate expiring within
tls.chart.renewBeforeDays is re-signed by the same CA (the caBundle does not change), and a CA that
would not outlive a new serving certificate is replaced. A Secret from an older chart without
ca.key is kept as it is.
*/}}
{{- define "rightsizer.tlsMaterial" -}}
{{- $v := .ctx.Values.tls.chart }}
{{- $names := include "rightsizer.serviceNames" .ctx | fromJsonArray }}
{{- $data := dig "data" dict .existing }}
{{- $rfc := "2006-01-02T15:04:05Z07:00" }}
{{- $certDays := int $v.certValidityDays }}
{{- $now := now | unixEpoch | int64 }}
{{- $out := dict "crt" (index $data "tls.crt" | default "") "key" (index $data "tls.key" | default "") "ca" (index $data "ca.crt" | default "") "caKey" (index $data "ca.key" | default "") }}
{{- $_ := set $out "notAfter" (dig "metadata" "annotations" "rightsizer.io/certificate-not-after" "" .existing) }}
{{- $_ = set $out "caNotAfter" (dig "metadata" "annotations" "rightsizer.io/ca-not-after" "" .existing) }}
{{- if and $out.ca (not $out.caKey) }}
{{- /* an older chart's Secret: nothing to sign with; keep it */}}
{{- else }}
{{- $ca := dict }}
{{- $caLeft := 0 }}
{{- if and $out.ca $out.caKey $out.caNotAfter }}
{{- $caLeft = sub ((toDate $rfc $out.caNotAfter) | unixEpoch | int64) $now }}
{{- end }}
{{- if and $out.ca $out.caKey (gt (int64 $caLeft) (int64 (mul $certDays 86400))) }}
{{- $ca = buildCustomCert $out.ca $out.caKey }}
{{- else }}
{{- $caDays := int $v.caValidityDays }}
{{- $ca = genCA (printf "%s-ca" (include "rightsizer.fullname" .ctx)) $caDays }}
{{- $_ = set $out "ca" ($ca.Cert | b64enc) }}
{{- $_ = set $out "caKey" ($ca.Key | b64enc) }}
{{- $_ = set $out "caNotAfter" (now | dateModify (printf "+%dh" (mul $caDays 24)) | date $rfc) }}
{{- $_ = set $out "crt" "" }}
{{- end }}
{{- $left := 0 }}
{{- if and $out.crt $out.key $out.notAfter }}
{{- $left = sub ((toDate $rfc $out.notAfter) | unixEpoch | int64) $now }}
{{- end }}
{{- if le (int64 $left) (int64 (mul (int $v.renewBeforeDays) 86400)) }}
{{- $cert := genSignedCert (index $names 2) nil $names $certDays $ca }}
{{- $_ = set $out "crt" ($cert.Cert | b64enc) }}
{{- $_ = set $out "key" ($cert.Key | b64enc) }}
{{- $_ = set $out "notAfter" (now | dateModify (printf "+%dh" (mul $certDays 24)) | date $rfc) }}
{{- end }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{/* Refuses values that cannot work, with a message that says what to set. */}}
{{- define "rightsizer.validate" -}}
{{- $replicas := int .Values.replicaCount }}
{{- if not (has .Values.database.type (list "postgres" "sqlite")) }}
{{- fail (printf "\n\nrightsizer: database.type must be postgres or sqlite, not %q." .Values.database.type) }}
{{- end }}
{{- if and (gt $replicas 1) (eq .Values.database.type "sqlite") }}
{{- fail (printf "\n\nrightsizer: replicaCount=%d cannot use database.type=sqlite: a SQLite file on a volume serves one replica only.\nEither set replicaCount=1, or use PostgreSQL: database.type=postgres with a Secret %q whose key %q holds\npostgresql+psycopg://user:password@host:5432/db (or database.postgres.url).\n" $replicas (include "rightsizer.databaseSecretName" .) .Values.database.postgres.secretKey) }}
{{- end }}
{{- if lt $replicas 1 }}
{{- fail "\n\nrightsizer: replicaCount must be at least 1 (the webhook must answer)." }}
{{- end }}
{{- $mode := include "rightsizer.tlsMode" . }}
{{- if and (not .Values.webhook.selfRegister) (eq $mode "self") }}
{{- fail "\n\nrightsizer: webhook.selfRegister=false needs a certificate the chart knows: with tls.selfManaged=true only rightsizer knows its CA.\nSet tls.selfManaged=false (the chart generates one), certManager.enabled=true, or tls.existingSecret with tls.caBundle." }}
{{- end }}
{{- if and (not .Values.webhook.selfRegister) (eq $mode "existing") (not .Values.tls.caBundle) }}
{{- fail "\n\nrightsizer: webhook.selfRegister=false with tls.existingSecret needs tls.caBundle (the base64 PEM CA that signed the Secret's certificate)." }}
{{- end }}
{{- if .Values.placement.scheduler.enabled }}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" (toString .Values.placement.scheduler.name)) }}
{{- fail (printf "\n\nrightsizer: placement.scheduler.name %q must be a scheduler name: lower-case letters, digits, '-' and '.' (a DNS subdomain)." (toString .Values.placement.scheduler.name)) }}
{{- end }}
{{- if eq (toString .Values.placement.scheduler.name) "default-scheduler" }}
{{- fail "\n\nrightsizer: placement.scheduler.name cannot be default-scheduler: that is kube-scheduler's own." }}
{{- end }}
{{- $weight := int .Values.placement.scheduler.extender.weight }}
{{- if lt $weight 1 }}
{{- fail "\n\nrightsizer: placement.scheduler.extender.weight must be a positive whole number (kube-scheduler refuses 0 for a prioritizing extender)." }}
{{- end }}
{{- end }}
{{- include "rightsizer.validatePlacementTuning" . }}
{{- if not (has .Values.auth.mode (list "kubernetes" "tokens")) }}
{{- fail (printf "\n\nrightsizer: auth.mode must be kubernetes or tokens, not %q." .Values.auth.mode) }}
{{- end }}
{{- if and (eq .Values.auth.mode "tokens") (not .Values.auth.tokens.secretName) }}
{{- fail "\n\nrightsizer: auth.mode=tokens needs auth.tokens.secretName: a Secret whose key auth.tokens.secretKey holds the token file\n(lines token,user,permissions). Without it no token is valid and every API request is refused.\nCreate it with: kubectl create secret generic NAME --from-file=tokens=./tokens.csv, or use auth.mode=kubernetes." }}
{{- end }}
{{- if not (has .Values.webhook.failurePolicy (list "Ignore" "Fail")) }}
{{- fail "\n\nrightsizer: webhook.failurePolicy must be Ignore or Fail." }}
{{- end }}
{{- if or (lt (int .Values.webhook.timeoutSeconds) 1) (gt (int .Values.webhook.timeoutSeconds) 30) }}
{{- fail "\n\nrightsizer: webhook.timeoutSeconds must be between 1 and 30." }}
{{- end }}
{{- range $name := list "tlsHandshakeTimeoutSeconds" "headerTimeoutSeconds" "bodyTimeoutSeconds" }}
{{- $bound := get $.Values.gunicorn $name | float64 }}
{{- if or (le $bound 0.0) (gt $bound (float64 $.Values.webhook.timeoutSeconds)) }}
{{- fail (printf "\n\nrightsizer: gunicorn.%s (%v) must be more than 0 and at most webhook.timeoutSeconds (%v): kube-apiserver gives up on the webhook by then." $name (get $.Values.gunicorn $name) $.Values.webhook.timeoutSeconds) }}
{{- end }}
{{- end }}
{{- end }}

{{/* Water-level placement tuning (placement.levels, .scoring, .filter) ------------------------ */}}

{{/*
Each value as a JSON row: its path under placement, the setting it sets (app/config.py's
ENVIRONMENT), the value, and what rightsizer accepts for it (check). An empty value (null, "" or
[]) passes no setting, so rightsizer's own default applies: the defaults live in app/config.py only.
*/}}
{{- define "rightsizer.placementTuning" -}}
{{- $levels := .Values.placement.levels | default dict }}
{{- $scoring := .Values.placement.scoring | default dict }}
{{- $filter := .Values.placement.filter | default dict }}
{{- $rows := list
  (dict "path" "levels.intervalSeconds" "env" "RIGHTSIZER_PLACEMENT_INTERVAL_SECONDS" "check" "positive" "value" $levels.intervalSeconds)
  (dict "path" "levels.refreshSeconds" "env" "RIGHTSIZER_PLACEMENT_REFRESH_SECONDS" "check" "positive" "value" $levels.refreshSeconds)
  (dict "path" "levels.aheadHours" "env" "RIGHTSIZER_PLACEMENT_AHEAD_HOURS" "check" "hours" "value" $levels.aheadHours)
  (dict "path" "scoring.windowWeights" "env" "RIGHTSIZER_PLACEMENT_WINDOW_WEIGHTS" "check" "weights" "value" $scoring.windowWeights)
  (dict "path" "scoring.minWeight" "env" "RIGHTSIZER_PLACEMENT_MIN_WEIGHT" "check" "nonNegative" "value" $scoring.minWeight)
  (dict "path" "scoring.aheadWeight" "env" "RIGHTSIZER_PLACEMENT_AHEAD_WEIGHT" "check" "nonNegative" "value" $scoring.aheadWeight)
  (dict "path" "scoring.spreadWeight" "env" "RIGHTSIZER_PLACEMENT_SPREAD_WEIGHT" "check" "fraction" "value" $scoring.spreadWeight)
  (dict "path" "scoring.spreadMemoryWeight" "env" "RIGHTSIZER_PLACEMENT_SPREAD_MEMORY_WEIGHT" "check" "nonNegative" "value" $scoring.spreadMemoryWeight)
  (dict "path" "filter.threshold" "env" "RIGHTSIZER_PLACEMENT_FILTER_THRESHOLD" "check" "fraction" "value" $filter.threshold)
}}
{{- toJson $rows }}
{{- end }}

{{/* "true" when a tuning value is empty (null, "" or []): no setting passed. */}}
{{- define "rightsizer.unset" -}}
{{- if or (kindIs "invalid" .) (and (kindIs "string" .) (eq . "")) (and (kindIs "slice" .) (empty .)) }}true{{ end }}
{{- end }}

{{/* "true" when v (a number, or a string --set passes) is a plain decimal number, as Python's float() reads it. */}}
{{- define "rightsizer.isNumber" -}}
{{- if and (or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) (kindIs "string" .)) (regexMatch "^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$" (toString .)) }}true{{ end }}
{{- end }}

{{/* Refuses what app/config.py's parsers would refuse, naming the value and its setting. */}}
{{- define "rightsizer.validatePlacementTuning" -}}
{{- $needs := dict
  "positive" "must be a number more than 0"
  "nonNegative" "must be a number, 0 or more"
  "fraction" "must be a number from 0 to 1"
  "hours" "must be a whole number of hours from 0 to 24"
  "weights" "must be three numbers, the weights of the 15-minute, 1-hour and 1-day windows, none negative and not all 0, e.g. [0.5, 0.3, 0.2]"
}}
{{- range $row := include "rightsizer.placementTuning" . | fromJsonArray }}
{{- $v := $row.value }}
{{- if not (include "rightsizer.unset" $v) }}
{{- if hasKey $.Values.settings $row.env }}
{{- fail (printf "\n\nrightsizer: placement.%s and settings.%s both set %s: keep one." $row.path $row.env $row.env) }}
{{- end }}
{{- $ok := false }}
{{- if eq $row.check "weights" }}
{{- if and (kindIs "slice" $v) (eq (len $v) 3) }}
{{- $ok = true }}
{{- $sum := 0.0 }}
{{- range $w := $v }}
{{- if and (include "rightsizer.isNumber" $w) (ge (float64 $w) 0.0) }}
{{- $sum = addf $sum (float64 $w) }}
{{- else }}
{{- $ok = false }}
{{- end }}
{{- end }}
{{- if le $sum 0.0 }}
{{- $ok = false }}
{{- end }}
{{- end }}
{{- else if include "rightsizer.isNumber" $v }}
{{- $f := float64 $v }}
{{- if eq $row.check "positive" }}
{{- $ok = gt $f 0.0 }}
{{- else if eq $row.check "nonNegative" }}
{{- $ok = ge $f 0.0 }}
{{- else if eq $row.check "fraction" }}
{{- $ok = and (ge $f 0.0) (le $f 1.0) }}
{{- else if eq $row.check "hours" }}
{{- $ok = and (regexMatch "^[0-9]+$" (toString $v)) (le $f 24.0) }}
{{- end }}
{{- end }}
{{- if not $ok }}
{{- fail (printf "\n\nrightsizer: placement.%s (%s) %s (%s). Leave it empty for rightsizer's default." $row.path (toJson $v) (get $needs $row.check) $row.env) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* The tuning values set, as the settings app/config.py reads (windowWeights comma-separated). */}}
{{- define "rightsizer.placementTuningEnv" -}}
{{- range $row := include "rightsizer.placementTuning" . | fromJsonArray }}
{{- if not (include "rightsizer.unset" $row.value) }}
- name: {{ $row.env }}
  value: {{ ternary (join "," $row.value) (toString $row.value) (kindIs "slice" $row.value) | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Environment ------------------------------------------------------------------------------ */}}

{{/* RIGHTSIZER_DATABASE_URL: from the Secret (PostgreSQL), or the SQLite file on the data volume. */}}
{{- define "rightsizer.databaseEnv" -}}
{{- if eq (include "rightsizer.databaseMode" .) "postgres" }}
- name: RIGHTSIZER_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "rightsizer.databaseSecretName" . }}
      key: {{ .Values.database.postgres.secretKey }}
{{- else }}
- name: RIGHTSIZER_DATABASE_URL
  value: {{ printf "sqlite:///%s/rightsizer.db" (include "rightsizer.sqliteDir" .) | quote }}
{{- end }}
{{- end }}

{{/* The server's settings (docs/configuration.md). */}}
{{- define "rightsizer.env" -}}
# the root filesystem is read-only: what writes under HOME (gunicorn's control socket) uses /tmp
- name: HOME
  value: /tmp
- name: RIGHTSIZER_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: RIGHTSIZER_JOBS
  value: {{ .Values.jobs.enabled | toString | quote }}
- name: RIGHTSIZER_CLUSTER_NAME
  value: {{ .Values.cluster.name | toString | quote }}
- name: RIGHTSIZER_CLUSTER_ID
  value: {{ .Values.cluster.id | toString | quote }}
- name: RIGHTSIZER_CLUSTER_LABELS
  value: {{ include "rightsizer.clusterLabels" . | quote }}
- name: RIGHTSIZER_RECOMMENDER_INTERVAL
  value: {{ .Values.recommender.interval | toString | quote }}
- name: RIGHTSIZER_EXCLUDED_NAMESPACES
  value: {{ join "," .Values.excludedNamespaces | quote }}
- name: RIGHTSIZER_PROMETHEUS_URL
  value: {{ .Values.recommender.prometheusUrl | quote }}
- name: RIGHTSIZER_LEASE_NAME
  value: {{ include "rightsizer.leaseName" . | quote }}
- name: RIGHTSIZER_LEASE_DURATION
  value: {{ .Values.leaderElection.leaseDuration | toString | quote }}
- name: RIGHTSIZER_LEASE_RENEW_DEADLINE
  value: {{ .Values.leaderElection.renewDeadline | toString | quote }}
- name: RIGHTSIZER_LEASE_RETRY_PERIOD
  value: {{ .Values.leaderElection.retryPeriod | toString | quote }}
- name: RIGHTSIZER_BIND
  value: {{ printf "0.0.0.0:%d" (int .Values.containerPort) | quote }}
- name: RIGHTSIZER_WORKERS
  value: {{ .Values.gunicorn.workers | toString | quote }}
- name: RIGHTSIZER_THREADS
  value: {{ .Values.gunicorn.threads | toString | quote }}
- name: RIGHTSIZER_ACCESS_LOG
  value: {{ .Values.gunicorn.accessLog | toString | quote }}
- name: RIGHTSIZER_TLS_HANDSHAKE_TIMEOUT_SECONDS
  value: {{ .Values.gunicorn.tlsHandshakeTimeoutSeconds | toString | quote }}
- name: RIGHTSIZER_HEADER_TIMEOUT_SECONDS
  value: {{ .Values.gunicorn.headerTimeoutSeconds | toString | quote }}
- name: RIGHTSIZER_BODY_TIMEOUT_SECONDS
  value: {{ .Values.gunicorn.bodyTimeoutSeconds | toString | quote }}
{{- include "rightsizer.certEnv" . }}
{{- if .Values.placement.scheduler.enabled }}
- name: RIGHTSIZER_PLACEMENT_SCHEDULER_NAME
  value: {{ .Values.placement.scheduler.name | quote }}
{{- end }}
{{- include "rightsizer.placementTuningEnv" . }}
{{- if eq (include "rightsizer.tlsMode" .) "self" }}
- name: RIGHTSIZER_CERT_ROTATE
  value: "true"
- name: RIGHTSIZER_CERT_CHECK_SECONDS
  value: {{ .Values.tls.self.checkSeconds | toString | quote }}
{{- end }}
- name: RIGHTSIZER_TLS_CERT_FILE
  value: {{ printf "%s/tls.crt" (include "rightsizer.certDir" .) | quote }}
- name: RIGHTSIZER_TLS_KEY_FILE
  value: {{ printf "%s/tls.key" (include "rightsizer.certDir" .) | quote }}
- name: RIGHTSIZER_WEBHOOK_REGISTER
  value: {{ .Values.webhook.selfRegister | toString | quote }}
- name: RIGHTSIZER_WEBHOOK_CONFIG_NAME
  value: {{ include "rightsizer.webhookConfigurationName" . | quote }}
- name: RIGHTSIZER_WEBHOOK_PORT
  value: {{ .Values.service.port | toString | quote }}
- name: RIGHTSIZER_WEBHOOK_TIMEOUT_SECONDS
  value: {{ .Values.webhook.timeoutSeconds | toString | quote }}
- name: RIGHTSIZER_AUTH_MODE
  value: {{ .Values.auth.mode | quote }}
- name: RIGHTSIZER_PUBLIC_READS
  value: {{ .Values.auth.publicReads | toString | quote }}
{{- if eq .Values.auth.mode "kubernetes" }}
- name: RIGHTSIZER_AUTH_API_GROUP
  value: {{ .Values.auth.apiGroup | quote }}
- name: RIGHTSIZER_AUTH_CACHE_SECONDS
  value: {{ .Values.auth.cacheSeconds | toString | quote }}
{{- else }}
- name: RIGHTSIZER_AUTH_TOKEN_FILE
  value: {{ printf "%s/tokens" (include "rightsizer.authDir" .) | quote }}
{{- end }}
{{- range $name, $value := .Values.settings }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/* The water-level scheduler (placement.scheduler, docs/helm.md) ---------------------------- */}}

{{/* Its objects' name: the Deployment, ServiceAccount, ConfigMap, Role and its Lease. */}}
{{- define "rightsizer.schedulerFullname" -}}
{{- printf "%s-water-level" (include "rightsizer.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Its pods' labels: not the server's (the Service and the server's Deployment select those). */}}
{{- define "rightsizer.schedulerSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-water-level" (include "rightsizer.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: scheduler
{{- end }}

{{- define "rightsizer.schedulerLabels" -}}
helm.sh/chart: {{ include "rightsizer.chart" . }}
{{ include "rightsizer.schedulerSelectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
The kube-scheduler image: placement.scheduler.image.tag, or the cluster's own release
(major.minor.patch of its version, without a provider's suffix such as -eks-1234), since
kube-scheduler must not be newer than kube-apiserver.
*/}}
{{- define "rightsizer.schedulerImage" -}}
{{- $image := .Values.placement.scheduler.image }}
{{- $tag := $image.tag }}
{{- if not $tag }}
{{- $v := semver .Capabilities.KubeVersion.Version }}
{{- $tag = printf "v%d.%d.%d" $v.Major $v.Minor $v.Patch }}
{{- end }}
{{- printf "%s:%s" $image.repository $tag }}
{{- end }}

{{/* Where the scheduler finds rightsizer's CA (the ca.crt of the webhook's TLS Secret). */}}
{{- define "rightsizer.schedulerCaDir" -}}/etc/rightsizer/ca{{- end }}

{{/*
Its KubeSchedulerConfiguration: one profile, named placement.scheduler.name, whose extender is
rightsizer's (HTTPS, verified against rightsizer's CA; `ignorable`: when rightsizer cannot be
reached, pods are scheduled by kube-scheduler's own scores, never held back).
*/}}
{{- define "rightsizer.schedulerConfig" -}}
{{- $scheduler := .Values.placement.scheduler -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceLock: leases
  resourceNamespace: {{ .Release.Namespace }}
  resourceName: {{ include "rightsizer.schedulerFullname" . }}
profiles:
  - schedulerName: {{ $scheduler.name }}
extenders:
  - urlPrefix: {{ printf "https://%s.%s.svc:%d/scheduler" (include "rightsizer.fullname" .) .Release.Namespace (int .Values.service.port) }}
    filterVerb: filter
    prioritizeVerb: prioritize
    weight: {{ int $scheduler.extender.weight }}
    enableHTTPS: true
    tlsConfig:
      caFile: {{ include "rightsizer.schedulerCaDir" . }}/ca.crt
    httpTimeout: {{ $scheduler.extender.httpTimeout }}
    nodeCacheCapable: true
    ignorable: true
{{- end }}

{{/*
cluster.labels as RIGHTSIZER_CLUSTER_LABELS reads them: key=value, comma-separated, by key.
*/}}
{{- define "rightsizer.clusterLabels" -}}
{{- $labels := list -}}
{{- range $k, $v := .Values.cluster.labels -}}
{{- $labels = append $labels (printf "%s=%s" $k (toString $v)) -}}
{{- end -}}
{{- join "," $labels -}}
{{- end -}}
