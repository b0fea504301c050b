package predictor

import (
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
)

// The retry configuration of each AWS client, chosen per call pattern. All
// use the SDK's standard mode (exponential backoff with full jitter); none
// uses adaptive mode, whose client-side rate limiter would hold a result
// write behind unrelated throttles and whose state is lost with each
// execution environment anyway.
const (
	// DynamoDBMaxAttempts: the ledger writes around the paid call must
	// outlast a burst of throttling (on-demand tables throttle a hot
	// partition too). Each call retries up to 6 times within about 2 s;
	// the predictor's persist loop then keeps retrying the writes that end
	// a claim until the invocation's finishing window closes.
	DynamoDBMaxAttempts = 6
	DynamoDBMaxBackoff  = time.Second
	// S3MaxAttempts: reads are free and SlowDown asks for backoff; an object
	// that still cannot be read goes back to the queue untouched.
	S3MaxAttempts = 5
	S3MaxBackoff  = 2 * time.Second
	// SecretsManagerMaxAttempts: the key is cached for the environment's
	// life, so reads are rare; a read that still fails leaves the upload
	// waiting (key_unavailable), with nothing charged.
	SecretsManagerMaxAttempts = 5
	SecretsManagerMaxBackoff  = 2 * time.Second
)

// dynamoDBRetryables are the errors the DynamoDB client retries, and the
// persist loop with it (transient): the SDK's, plus
// TransactionConflictException: DynamoDB refuses a single-item write while
// a transaction (another tool's, an operator's script) holds the item, and
// the conflict clears by itself. The SDK does not retry it by default.
var dynamoDBRetryables = append(slices.Clone(retry.DefaultRetryables), retry.RetryableErrorCode{Codes: map[string]struct{}{
	"TransactionConflictException": {},
}})

// dynamoDBRetryer: no client-side retry quota (ratelimit.None). The quota
// (500 tokens, 5 per retry) protects a fleet from retry storms, but one
// execution environment makes few concurrent requests, and a quota spent by
// a throttling burst would fail a result write without a single retry.
func dynamoDBRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = DynamoDBMaxAttempts
		o.MaxBackoff = DynamoDBMaxBackoff
		o.RateLimiter = ratelimit.None
		o.Retryables = slices.Clone(dynamoDBRetryables)
	})
}

func standardRetryer(attempts int, backoff time.Duration) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = attempts
		o.MaxBackoff = backoff
	})
}

// NewAWSClients builds the predictor's AWS clients from cfg with the retry
// configuration above. s3Opts adjusts the S3 client (path-style addressing
// for local endpoints). The function and local runs both build their
// clients here, so the soak runs the retry configuration that ships.
func NewAWSClients(cfg aws.Config, s3Opts ...func(*s3.Options)) AWSClients {
	// lambdarun.DynamoDBOptions: the response CRC32 check warns on no
	// checksum otherwise (every failed conditional write, locally).
	ddb := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.Retryer = dynamoDBRetryer() }, lambdarun.DynamoDBOptions)
	objects := s3.NewFromConfig(cfg, append([]func(*s3.Options){func(o *s3.Options) {
		o.Retryer = standardRetryer(S3MaxAttempts, S3MaxBackoff)
	}}, s3Opts...)...)
	return AWSClients{
		S3:       objects,
		DynamoDB: ddb,
		SecretsManager: func() (secretkey.SecretsManagerAPI, error) {
			return secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) {
				o.Retryer = standardRetryer(SecretsManagerMaxAttempts, SecretsManagerMaxBackoff)
			}), nil
		},
		Visibility: NewSQSVisibility(sqs.NewFromConfig(cfg)),
	}
}
