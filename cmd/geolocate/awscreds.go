package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/ssocreds"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

// loadAWSConfig is the default AWS configuration of every command that
// calls AWS (results, backfill, status, doctor, and --secret-id): the usual
// environment and profile for credentials, region and endpoints
// (AWS_ENDPOINT_URL_DYNAMODB and friends point a command at local parts).
// The credentials are fetched once here, before the first call, so that a
// machine without any says so once, in one line (credentialsProblem),
// instead of each call failing with the SDK's chain.
func loadAWSConfig(ctx context.Context, getenv func(string) string) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(sdkLogger{logging.NewStandardLogger(os.Stderr)}))
	if err != nil {
		if problem := credentialsProblem(err, getenv); problem != nil {
			return cfg, problem
		}
		return cfg, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Credentials == nil {
		return cfg, credentialsProblem(errNoCredentials, getenv)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		if problem := credentialsProblem(err, getenv); problem != nil {
			return cfg, problem
		}
		return cfg, fmt.Errorf("AWS credentials: %w", err)
	}
	if cfg.Region == "" {
		// The SDK would say it at the first call, as "failed to resolve
		// service endpoint, endpoint rule error, Invalid Configuration:
		// Missing Region".
		return cfg, &credentialsError{missingRegion(getenv)}
	}
	return cfg, nil
}

// sdkLogger drops the SDK's "falling back to IMDSv1" warning: on a machine
// that is not an EC2 instance the default credential chain's last step
// asks the instance metadata service, which is not there; the warning says
// nothing the user can act on, and the missing credentials are reported by
// credentialsProblem. Other SDK lines pass.
type sdkLogger struct{ next logging.Logger }

func (l sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	if strings.HasPrefix(format, "falling back to IMDSv1") {
		return
	}
	l.next.Logf(c, format, v...)
}

var errNoCredentials = errors.New("no credentials provider")

// missingRegion says, in one line, what to set when no region is.
func missingRegion(getenv func(string) string) string {
	if profile := strings.TrimSpace(getenv("AWS_PROFILE")); profile != "" {
		return fmt.Sprintf("no AWS region: export AWS_REGION=<region> (e.g. eu-west-1), or give the profile one: aws configure set region <region> --profile %s", profile)
	}
	return "no AWS region: export AWS_REGION=<region> (e.g. eu-west-1), or set one in your AWS profile (aws configure set region <region>)"
}

// credentialsError is a credentials problem told in one line, with what to
// do about it.
type credentialsError struct{ msg string }

func (e *credentialsError) Error() string { return e.msg }

// credentialsProblem recognises, anywhere in an AWS SDK error chain, that
// there are no AWS credentials, that the SSO session has expired, or that
// the credentials were refused, and says so in one line with what to do.
// It returns nil for any other error.
func credentialsProblem(err error, getenv func(string) string) error {
	if err == nil {
		return nil
	}
	var already *credentialsError
	if errors.As(err, &already) {
		return already
	}
	profile := strings.TrimSpace(getenv("AWS_PROFILE"))
	login := "aws sso login"
	if profile != "" {
		login += " --profile " + profile
	}
	var (
		sso       *ssocreds.InvalidTokenError
		noProfile config.SharedConfigProfileNotExistError
		apiErr    smithy.APIError
	)
	msg := err.Error()
	switch {
	case errors.As(err, &sso) || strings.Contains(msg, "refresh cached SSO token failed"):
		return &credentialsError{fmt.Sprintf("the AWS SSO session has expired: run `%s`, then retry", login)}
	case errors.As(err, &noProfile):
		return &credentialsError{fmt.Sprintf("AWS_PROFILE=%s names no profile in your AWS config: set up one with `aws configure sso` (or list them: aws configure list-profiles)", noProfile.Profile)}
	case errors.Is(err, errNoCredentials), strings.Contains(msg, "no EC2 IMDS role found"),
		strings.Contains(msg, "failed to refresh cached credentials") && strings.Contains(msg, "get credentials"):
		return &credentialsError{"no AWS credentials found: set AWS_PROFILE to a profile (`aws configure sso` creates one) or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"}
	case errors.As(err, &apiErr):
		switch apiErr.ErrorCode() {
		case "ExpiredToken", "ExpiredTokenException":
			return &credentialsError{fmt.Sprintf("your AWS credentials have expired: renew them (`%s` for an SSO profile), then retry", login)}
		case "InvalidClientTokenId", "UnrecognizedClientException", "InvalidAccessKeyId":
			return &credentialsError{"AWS refused your credentials (" + apiErr.ErrorCode() + "): check AWS_PROFILE or AWS_ACCESS_KEY_ID, and the account and region they are for"}
		}
	}
	return nil
}
