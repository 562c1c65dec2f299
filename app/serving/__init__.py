"""What `rightsizer serve` runs around the Flask app: the steps before gunicorn starts (`prepare`),
the webhook registration (`registration`), the TLS material (`certs`) and its renewal while
serving (`rotation`), and gunicorn's own settings (`gunicorn_conf`)."""
