"""What tests share, defined once: test modules and conftest files import helpers only from here.

`fixtures` is the pytest plugin (registered in tests/conftest.py) with the fixtures every test
may ask for: `database_url`, `app` and `client`, and `sim` (a simulated cluster whose scenario a
module chooses by overriding `scenario`, `sim_options`, `sim_namespaces` or `sim_warmup`).
`users` holds the fixtures of tests that call the API as real users (a conftest imports them).
The other modules are helpers named for what they own: `reviews` (AdmissionReviews posted to
/mutate), `pods`, `generators` (Hypothesis strategies), `processes` (rightsizer as a separate
process), `proxies`, `tokens`, `usage` (usage models with known samples), `simulators`,
`databases`, `live_server`, `fake_registrations`, `fake_kube` (a kube-apiserver answering
TokenReview and SubjectAccessReview), `bodies` (seeded, mostly broken bodies for POST /mutate),
`screenshots`, `helm`, `kubectl`, `recommender_runs`/`updater_runs` (a job run step by step
against the simulator), and `vpa_oracle` (a naive re-computation of VPA's recommendation to check
the real one against).
"""
