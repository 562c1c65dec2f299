"""kube-apiserver's rules and storage, free of any running cluster: the object store and its
watch window, selectors, patches, per-kind defaults and validation, admission (mutating webhooks,
LimitRanger), resource quantities, QoS, the Status errors and the release served."""
