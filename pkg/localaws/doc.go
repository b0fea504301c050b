// Package localaws runs real local stand-ins for the AWS services the
// pipeline uses, for tests, `make run` and benchmarks: DynamoDB Local (the
// official jar, installed by npm) and an in-memory S3 (gofakes3). Both bind
// to 127.0.0.1 on a free port and hand out SDK clients with fake
// credentials in us-east-1.
//
// Tests should use the helpers of package localawstest, which share one
// DynamoDB Local per test binary.
package localaws

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Region is the region every local client uses.
const Region = "us-east-1"

// fakeCredentials are accepted by both local services, which do not check
// signatures against real accounts.
func fakeCredentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider("localawsfakeaccesskey", "localawsfakesecretkey", "")
}
