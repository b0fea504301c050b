// Package local holds the local rig: everything that lets the pipeline run,
// be tested and be measured on one machine with no AWS account and no key.
// Nothing under pkg/local ever ships in a function; a test in functions/
// fails when a function's dependencies reach into it.
//
// The stand-ins for the world outside the account:
//
//   - geosim: a faithful simulator of the geolocation service (accounts,
//     keys, models, credits, rate limit, fault injection, call log).
//   - awsparts: real local AWS parts (gofakes3 made as strict as S3,
//     DynamoDB Local); awsparts/awspartstest gives each test its own.
//   - sqsqueue: an in-memory SQS with visibility timeouts, receive counts,
//     a redrive policy and SQS's own metrics.
//   - lambdaruntime: a local Lambda Runtime API that runs a built function,
//     freezes it between invocations and kills it at its deadline.
//   - awsfault: a fault-injecting proxy in front of the local AWS parts.
//
// Running and judging the pipeline:
//
//   - pipeline: the whole pipeline in one process (`make run`,
//     `geolocate local`).
//   - scenario: the synthesized template deployed on a simulated clock, for
//     the alarm scenarios.
//   - alarmeval, awsmetrics: CloudWatch's metrics and alarm rules, evaluated
//     locally over the functions' EMF output and AWS's own metrics.
//   - dashpage: the stack's dashboard drawn as one HTML page from a local run.
//   - cfntemplate: the one reader of a synthesized template and resolver of
//     its intrinsic functions, behind scenario, alarmeval, pipes, dashpage
//     and infra's policy tests.
//   - soak, bench: the fault soak and the measuring tools behind `make bench`.
//   - awscalls, simclock, syncbuf: small test helpers (the AWS calls a client
//     makes, a clock moved by hand, a buffer safe for concurrent writers).
package local
