package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

// secretSource reads a secret's string value; tests replace it.
type secretSource interface {
	SecretString(ctx context.Context, id string) (string, error)
}

// awsSecrets reads from AWS Secrets Manager with the default credential
// chain (environment, profile, SSO, instance role).
type awsSecrets struct{}

func (awsSecrets) SecretString(ctx context.Context, id string) (string, error) {
	cfg, err := loadAWSConfig(ctx, os.Getenv)
	if err != nil {
		return "", err
	}
	out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if noValueYet(err) {
		return "", nil // read as empty: the stack's secret before put-secret-value
	}
	if err != nil {
		return "", err
	}
	if out.SecretString == nil {
		return "", errors.New("the secret has no string value")
	}
	return *out.SecretString, nil
}

// noValueYet reports the error of a secret that exists but has no version
// yet, as the stack creates it (no initial value, so no deployment can write
// over the key): Secrets Manager answers ResourceNotFoundException "can't
// find the specified secret value for staging label: AWSCURRENT", where a
// missing secret's message has no "secret value".
func noValueYet(err error) bool {
	var notFound *types.ResourceNotFoundException
	return errors.As(err, &notFound) && strings.Contains(notFound.ErrorMessage(), "secret value")
}
