package envvars

// LocalRigAccessKeyID is the fake AWS access key id (and secret) that the
// local rig's export line (geolocate local --serve) sets in
// AWS_ACCESS_KEY_ID. It lives here, not in the rig, because the CLI's
// AWS-facing commands, which must never import the rig, recognise a shell
// holding the rig's environment by it and say so.
const LocalRigAccessKeyID = "local"
