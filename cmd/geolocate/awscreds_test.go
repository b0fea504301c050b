package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/ssocreds"
	"github.com/aws/smithy-go"
)

func TestCredentialsProblemRecognisesTheSDKChains(t *testing.T) {
	env := func(profile string) func(string) string {
		return func(k string) string {
			if k == "AWS_PROFILE" {
				return profile
			}
			return ""
		}
	}
	// The chain the issue quotes, as the SDK builds it: an operation error
	// around the signer's "get identity: get credentials:" around the
	// credential cache's and the last provider's wrapping.
	noCredentials := &smithy.OperationError{ServiceID: "CloudFormation", OperationName: "DescribeStacks",
		Err: fmt.Errorf("get identity: %w", fmt.Errorf("get credentials: %w", fmt.Errorf("failed to refresh cached credentials, %w",
			fmt.Errorf("no EC2 IMDS role found, %w", errors.New("operation error ec2imds: GetMetadata, http response error StatusCode: 403, request to EC2 IMDS failed")))))}
	for _, tt := range []struct {
		name    string
		err     error
		profile string
		want    string // "" for not a credentials problem
	}{
		{"no credentials, wrapped as results wraps it", fmt.Errorf("find the results table (pass --table or set TABLE_NAME): describe stack Geolocation: %w", noCredentials), "",
			"no AWS credentials found: set AWS_PROFILE to a profile (`aws configure sso` creates one) or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"expired SSO session", fmt.Errorf("get credentials: %w", &ssocreds.InvalidTokenError{Err: errors.New("token expired")}), "dev",
			"the AWS SSO session has expired: run `aws sso login --profile dev`, then retry"},
		{"no such profile", config.SharedConfigProfileNotExistError{Profile: "prod"}, "prod",
			"AWS_PROFILE=prod names no profile in your AWS config"},
		{"expired session credentials", &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "Query", Err: &smithy.GenericAPIError{Code: "ExpiredTokenException", Message: "The security token included in the request is expired"}}, "",
			"your AWS credentials have expired: renew them (`aws sso login` for an SSO profile), then retry"},
		{"refused credentials", &smithy.GenericAPIError{Code: "UnrecognizedClientException"}, "",
			"AWS refused your credentials (UnrecognizedClientException)"},
		{"access denied is not a credentials problem", &smithy.GenericAPIError{Code: "AccessDeniedException"}, "", ""},
		{"a missing table is not one either", errors.New("read table t: ResourceNotFoundException: Requested resource not found"), "", ""},
		{"nor a cancelled call", context.Canceled, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := credentialsProblem(tt.err, env(tt.profile))
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("got %q, want nil", got)
			case tt.want != "" && (got == nil || !strings.HasPrefix(got.Error(), tt.want)):
				t.Errorf("got %v, want %q", got, tt.want)
			case got != nil && strings.ContainsAny(got.Error(), "\n"):
				t.Errorf("not one line: %q", got)
			}
		})
	}
}
