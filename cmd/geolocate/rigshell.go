package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// Variables of local --serve's export line that the AWS commands read.
const (
	envAccessKeyID            = "AWS_ACCESS_KEY_ID"
	envDynamoDBEndpoint       = "AWS_ENDPOINT_URL_DYNAMODB"
	envCloudFormationEndpoint = "AWS_ENDPOINT_URL_CLOUDFORMATION"
)

// rigProbeTimeout bounds the check that the local rig's DynamoDB answers:
// on 127.0.0.1 a live one accepts in microseconds.
const rigProbeTimeout = 2 * time.Second

// checkRigShell catches an AWS command run in a shell that holds the local
// rig's environment (local --serve's export line, with its fake
// credentials). The export line of the whole local stack names its
// CloudFormation endpoint: every AWS command then runs against that stack
// as against a deployed one, and fails at once, in one line, when it is
// gone (a stale export waited 5 s for a raw "connection refused"). An
// older export line (S3 and DynamoDB only) serves results alone; the other
// AWS commands need AWS itself there, where the fake credentials can only
// fail, once per call.
func (c *cli) checkRigShell(ctx context.Context) error {
	if c.cmd.needs != needsAWS || c.getenv(envAccessKeyID) != envvars.LocalRigAccessKeyID {
		return nil
	}
	what, variable := "stack", envCloudFormationEndpoint
	if c.getenv(variable) == "" {
		if c.name != "results" {
			return fmt.Errorf("this shell holds the local rig's environment (the export line of geolocate local --serve: %s=%s, S3 and DynamoDB on 127.0.0.1), and %s needs a deployed stack on AWS: run it in a new shell, with your AWS credentials",
				envAccessKeyID, envvars.LocalRigAccessKeyID, c.name)
		}
		what, variable = "DynamoDB", envDynamoDBEndpoint
	}
	endpoint := c.getenv(variable)
	u, err := url.Parse(endpoint)
	if endpoint == "" || err != nil || u.Host == "" {
		return nil // not the export line's: the SDK says what is wrong
	}
	dialer := net.Dialer{Timeout: rigProbeTimeout}
	conn, err := dialer.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		cause := err
		var op *net.OpError
		if errors.As(err, &op) {
			cause = op.Err
		}
		return fmt.Errorf("the local rig's %s at %s (%s, from local --serve's export line) does not answer (%v): start geolocate local --serve again and paste its new export line, or run %s in a new shell for a deployed stack",
			what, endpoint, variable, cause, c.name)
	}
	return conn.Close()
}
