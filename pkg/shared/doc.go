// Package shared groups the small packages that the functions and the CDK app
// in infra/ must agree on: the settings table, one declaration per
// deployment setting from which the context, the functions' environment,
// cdk.json and the docs are read or checked (settings), the environment
// variables' names (envvars), the metric names it alarms on (metricnames), the results
// table's key schema (tableschema) and the rules a combination of settings
// must obey (configrules), and the S3 notification that the CLI's backfill
// and the local rig put on the uploads queue (s3event). One definition
// each keeps the deployed stack and the code it runs from drifting apart.
package shared
