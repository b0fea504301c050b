// Package lambdaruntime runs a Lambda function's bootstrap binary locally
// under a strict model of the Lambda execution environment, so that code
// which only "works" because nothing enforces Lambda's limits fails locally
// too.
//
// The function is a real process speaking the Runtime API (2018-06-01) over
// HTTP, exactly as aws-lambda-go built with -tags lambda.norpc does on Lambda:
// GET /2018-06-01/runtime/invocation/next, POST .../invocation/{id}/response,
// POST .../invocation/{id}/error and POST /2018-06-01/runtime/init/error. The
// API listens on 127.0.0.1 only, on a fresh port for every execution
// environment, so a killed environment's connections can never reach its
// successor.
//
// # What is modelled
//
//   - Environment: the bootstrap starts with only the variables of
//     Config.Env plus those Lambda sets (AWS_LAMBDA_RUNTIME_API,
//     AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
//     AWS_LAMBDA_FUNCTION_VERSION, AWS_LAMBDA_INITIALIZATION_TYPE,
//     AWS_LAMBDA_LOG_GROUP_NAME, AWS_LAMBDA_LOG_STREAM_NAME, AWS_REGION and
//     AWS_DEFAULT_REGION when Config.Region is set, _HANDLER,
//     LAMBDA_TASK_ROOT, PATH, LANG, TZ=:UTC). Nothing is inherited from the
//     test process. Config.Env may not set the variables Lambda reserves and
//     sets itself; AWS credentials are allowed, because locally nothing else
//     provides them. The working directory is LAMBDA_TASK_ROOT, the
//     binary's directory.
//   - Init: the environment is created on demand by the first invocation (a
//     cold start). Init ends when the runtime first calls
//     invocation/next; it must do so within Config.InitTimeout (10 s by
//     default), or the invocation fails with Status InitFailed, as it does
//     if the runtime posts init/error or exits during init.
//   - One invocation at a time per environment (concurrent Invoke calls
//     queue). The deadline is the invocation's start plus Config.Timeout,
//     handed to the runtime as Lambda-Runtime-Deadline-Ms. The clock starts
//     before a frozen environment is thawed, so work the runtime does after
//     thawing and before it asks for the event counts against the
//     invocation.
//   - Timeout: if no response or error has been accepted by the deadline,
//     the invocation is Status Timeout ("Task timed out after N.NN
//     seconds"), the whole process group is killed with SIGKILL at once,
//     and the next invocation is a cold start. A response or error whose
//     body is complete only after the deadline is refused (410 Gone) and
//     never counts, whether or not the process was still alive to send it.
//   - Freeze: the environment is frozen (SIGSTOP of the process group) as
//     soon as a response or error is accepted, before the runtime is even
//     told it was accepted, and thawed (SIGCONT) when the next invocation
//     starts. Goroutines that outlive the handler make no progress between
//     invocations; they resume during the next one, as on Lambda.
//   - Crash: if the process exits during an invocation, the invocation is
//     Status Crashed (Runtime.ExitError) and the next one is a cold start.
//     If a thawed process exits before asking for the next event (as
//     aws-lambda-go does after reporting a panic), the environment is
//     replaced and that invocation is a cold start, as on Lambda, where the
//     exit would have happened before the freeze.
//   - Payload limits: a request or response larger than 6 MB (6291556
//     bytes, synchronous invocation) is refused; an oversized response makes
//     the invocation a FunctionError (Function.ResponseSizeTooLarge).
//   - Logs: the process's stdout and stderr go to Config.Stderr, with
//     START, END and REPORT lines and the timeout line, as in CloudWatch.
//   - The process dies with the test process (Linux: Pdeathsig SIGKILL) and
//     runs in its own process group, so that kills and freezes reach every
//     process it started without leaving that group.
//
// # What is NOT modelled
//
//   - Memory: Config.MemorySize is only reported to the function; there is
//     no memory limit (no OOM kill) and CPU is not scaled with memory.
//   - Storage and isolation: /tmp is the host's, is not limited to its
//     configured size and is not cleared with a new environment; the file
//     system is not read-only outside /tmp; the network is the host's.
//   - Concurrency and scaling: one environment per Runtime; there are no
//     throttles, reserved or provisioned concurrency, and no scaling out.
//     Idle environments are never reclaimed, so a warm environment stays
//     warm as long as the Runtime lives.
//   - Init retries: Lambda retries a failed on-demand init during the invoke
//     phase (a "suppressed init"); here a failed init is the invocation's
//     result, and the next invocation starts over.
//   - SnapStart, provisioned concurrency's pre-initialisation, Lambda
//     Managed Instances (AWS_LAMBDA_MAX_CONCURRENCY > 1), response
//     streaming, extensions and the Extensions/Telemetry/Logs APIs (an
//     extension registration is answered 404, so aws-lambda-go's SIGTERM
//     option falls back to its warning), SIGTERM before shutdown.
//   - Asynchronous invocation (retries, destinations, event age), event
//     source mappings, the Invoke API's own error shapes, X-Ray, client
//     context and Cognito identity headers, AWS credentials from a role.
//   - A process that leaves its process group (setsid/setpgid) escapes the
//     freeze and the kill; it can still never answer an invocation that is
//     over, because that environment's API is closed.
//   - Billing: Duration is measured, Billed Duration is rounded up to 1 ms.
//
// Names chosen here where Lambda publishes none: an init that times out is
// InitFailed with type Sandbox.Timedout; a runtime that asks for the next
// event without answering the current one ends it as a FunctionError of type
// Runtime.InvalidStateTransition.
package lambdaruntime
