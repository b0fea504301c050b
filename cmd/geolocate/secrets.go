package main

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
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
	if err != nil {
		return "", err
	}
	if out.SecretString == nil {
		return "", errors.New("the secret has no string value")
	}
	return *out.SecretString, nil
}
