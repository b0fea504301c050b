// Package monitor watches the two things that silently stop the pipeline:
// credits running out and models going down or being retired.
//
// On each scheduled run a Monitor reads the credit summary and the model list
// of the geolocation service (concurrently, with the account's key, so
// whitelist models granted to the organisation are seen), keeps each credit
// reading as a small history item in DynamoDB, forecasts the burn rate and the
// days until credits run out, and writes everything as CloudWatch Embedded
// Metric Format lines. A MonitorHealthy heartbeat is 1 only when every step
// succeeded; otherwise it is 0 and the reasons are logged and returned in the
// Report. Service problems never fail the invocation and never produce a
// made-up number: a figure that could not be read is simply not emitted.
//
// It also tells when a model becomes available (modelwatch.go): a new id in
// the list or a new default model, compared with what the previous run saw,
// counted in NewModelsAvailable and put on the bus as a Model Available
// event (docs/models.md).
package monitor
