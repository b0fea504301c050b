// Package scenario deploys the stack's synthesized template on a local rig
// and runs it on a simulated clock, so that a day of uploads, an outage or
// a misconfiguration plays out in seconds and the template's own alarms are
// evaluated over exactly what the pipeline publishes. It is test tooling:
// infra's alarm scenarios run on it; it never ships in a Lambda.
//
// # What is real
//
//   - The predictor and the monitor are the real handlers, configured by
//     their own parsers from the environment the template gives them (a
//     Redeploy with a bad setting fails their init, as on Lambda), and
//     invoked through the Lambda runtime's adapter.
//   - The upload queue is sqsqueue with the template's visibility timeout
//     and redrive policy, polled by the event source mapping with the
//     template's batch size; S3 is gofakes3, the table DynamoDB Local, the
//     service the simulator, the API key a secret read through the real
//     cached provider.
//   - Metrics: the functions' Embedded Metric Format lines, stamped with the
//     simulated time; SQS's queue metrics once a minute with SQS's
//     semantics (pkg/local/sqsqueue's Metrics); Lambda's Invocations, Errors,
//     Throttles and Duration; EventBridge's Invocations of the monitor's
//     schedule (pkg/local/awsmetrics). alarmeval evaluates every alarm of
//     the template once a simulated minute.
//
// # What is simplified
//
//   - Simulated time stands still while an invocation runs: every minute,
//     the event source mapping drains what is visible, one batch at a time.
//     So the predictor's rate is raised (pacing has its own tests and
//     benchmark), the client's retry backoff and the predictor's wait for a
//     call slot take no time (a wait too long for an invocation still
//     returns the message until its slot, on the simulated clock),
//     Duration is the real elapsed time, and no invocation times out.
//   - Throttling is a switch (Rig.Throttled): each of the mapping's
//     concurrent pollers receives a batch and is refused; the messages come
//     back after their visibility timeout with their receive count raised.
//   - The monitor's schedule fires every rate() period from the deployment;
//     cron schedules, EventBridge's retries and Lambda's asynchronous
//     retries are not modelled. A monitor that fails is one Errors and no
//     metrics.
//   - The secret cache's expiry runs on the wall clock inside the caching
//     library; the rig rebuilds the monitor's provider once the cache's TTL
//     has passed in simulated time after a new value is put.
package scenario
