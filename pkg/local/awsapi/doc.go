// Package awsapi serves local stand-ins of the AWS services the pipeline's
// CLI and functions call beyond S3 and DynamoDB (which pkg/local/awsparts
// serves), speaking the wire protocol each service's aws-sdk-go-v2 client
// speaks, so an unmodified client pointed at them with
// AWS_ENDPOINT_URL_<SERVICE> works as against AWS:
//
//   - SQS: awsJson1_0 (X-Amz-Target AmazonSQS.*), over pkg/local/sqsqueue;
//   - Lambda: restJson1 (POST /2015-03-31/functions/{name}/invocations);
//   - EventBridge: awsJson1_1 (X-Amz-Target AWSEvents.*), rules matched by
//     pkg/local/eventpattern;
//   - CloudWatch: Smithy RPC v2 CBOR (POST
//     /service/GraniteServiceVersion20100801/operation/{op}), the protocol
//     of the cloudwatch module go.mod pins (v1.75: the SDK left awsQuery);
//   - SNS and CloudFormation: awsQuery (form-encoded Action=..., XML answers).
//
// Only the operations the CLI, the functions and the smoke check use are
// served; any other answers the service's own "unknown operation" error, so
// a new call shows up as a clear failure instead of a silent empty answer.
// Every server binds 127.0.0.1 on an ephemeral port.
package awsapi
