// Package alarmeval evaluates a CloudFormation template's CloudWatch alarms
// locally, over the metrics a local run publishes, on a simulated clock. It
// is test tooling: it shows which alarm fires, when, and whether it stays
// put while the cause lasts, before the stack is deployed. It never ships
// in a Lambda.
//
// The alarms come from the synthesized template (ParseTemplate), not from a
// copy of their definitions, so what is evaluated is what CloudFormation
// will create. Metrics go into a Store, from the functions' Embedded Metric
// Format lines (Store.AddEMF) or directly (Store.Add) for the metrics AWS
// publishes itself (SQS, Lambda). An Evaluator then evaluates every alarm
// once per simulated minute and reports state transitions and the
// notifications CloudWatch would send.
//
// # What is modelled
//
// Following "Using Amazon CloudWatch alarms" and "Configuring how
// CloudWatch alarms treat missing data" in the CloudWatch User Guide:
//
//   - Metric alarms on one metric (Namespace, MetricName, Dimensions,
//     Statistic or ExtendedStatistic, Period, Unit) and metric math alarms
//     (Metrics: MetricStat and Expression entries, one returning data).
//   - Statistics Sum, Average, Minimum, Maximum, SampleCount and pNN
//     percentiles (nearest rank) over raw values; a period without values
//     has no datapoint, whatever the statistic.
//   - Metric math: numbers, ids, + - * / ^, comparisons, AND OR NOT,
//     IF(cond, a[, b]) and FILL(m, value) — what the stack's alarms use.
//     A missing operand makes the result missing; FILL gives its input a
//     value in every period of the evaluation range; a non-finite result
//     (division by zero) is missing.
//   - Periods aligned to their boundary in UTC; the current, unfinished
//     period is evaluated like the others (Options.CompletePeriodsOnly
//     leaves it out).
//   - Evaluation once a minute. Each evaluation retrieves an evaluation
//     range of more periods than EvaluationPeriods (by default
//     EvaluationPeriods + 2, as in the documentation's example; CloudWatch
//     does not document the exact number) and evaluates the most recent
//     EvaluationPeriods existing datapoints, wherever they are in the range;
//     only when fewer exist does TreatMissingData fill in the others, as
//     few as possible. ALARM when at least DatapointsToAlarm of them breach.
//     missing with no datapoint at all is INSUFFICIENT_DATA; ignore keeps
//     the state. The documentation's example tables are the package's
//     tests (missingdata.go has the rule).
//   - Every alarm starts in INSUFFICIENT_DATA. A change of state is
//     recorded with its time and a reason, and sends the actions for the
//     new state (AlarmActions, OKActions, InsufficientDataActions) once,
//     unless ActionsEnabled is false. A first move to OK therefore sends
//     OKActions, as CloudWatch does.
//   - Dimension values that are references to the stack's resources (Ref,
//     Fn::GetAtt) are kept as opaque strings ("Ref:<id>",
//     "GetAtt:<id>.<attr>") for the caller to map to local names
//     (Options.ResolveDimension) or to match by key only
//     (Options.MatchUnresolvedByKey). AlarmName is resolved through
//     Fn::Join and the Refs the caller supplies, else it is the logical id.
//
// # What is not
//
// Composite alarms and anomaly detection (the stack has neither; a
// template with them is refused), Metrics Insights queries, SEARCH and the
// other math functions, FILL with REPEAT or LINEAR, cross-account metrics,
// high-resolution alarms (periods under a minute) and 10- or 30-second
// evaluation, EvaluateLowSampleCountPercentile "ignore", the AWS/DynamoDB
// namespace's special handling of missing data, alarm mute rules and
// suppression, late-arriving data (a value counts from its timestamp on),
// the metric ingestion delay, and the warm-up of a new alarm. Actions are
// reported, not performed: an SNS action is one notification per change,
// EC2 and Auto Scaling repetition is not modelled.
package alarmeval
