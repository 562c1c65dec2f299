"""What the HTTP front parts share (the REST API, the dashboard and the webhook, which are
independent of each other): the caller's identity from a bearer token (`auth`), an error's JSON
body (`error_body`), and the registry where the webhook and the jobs hand `/readyz` and `/metrics`
what they report (`probes`)."""
