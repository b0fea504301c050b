package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
)

// apiKeySecret imports the configured secret or creates one for the geo_
// key. A new secret starts with a random placeholder, which the service
// rejects with 401 (no credit spent) until the user puts the real key in.
// created is the new secret, or nil when one is imported.
func apiKeySecret(stack awscdk.Stack, cfg Config) (secret awssecretsmanager.ISecret, created awssecretsmanager.Secret) {
	switch {
	case cfg.ExistingSecretArn != "":
		return awssecretsmanager.Secret_FromSecretCompleteArn(stack, jsii.String("ApiKeySecret"), jsii.String(cfg.ExistingSecretArn)), nil
	case cfg.ExistingSecretName != "":
		return awssecretsmanager.Secret_FromSecretNameV2(stack, jsii.String("ApiKeySecret"), jsii.String(cfg.ExistingSecretName)), nil
	}
	created = awssecretsmanager.NewSecret(stack, jsii.String("ApiKeySecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("API key (geo_...) of the image geolocation service. Set it with: aws secretsmanager put-secret-value --secret-id <SecretArn output> --secret-string <key>"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			ExcludePunctuation: jsii.Bool(true),
		},
		RemovalPolicy: cfg.removalPolicy(),
	})
	return created, created
}

// secretID is what the functions pass to GetSecretValue. An imported name
// has no complete ARN (the random suffix is unknown), so it is passed as is;
// Secrets Manager resolves names as well as ARNs.
func secretID(cfg Config, secret awssecretsmanager.ISecret) *string {
	if cfg.ExistingSecretName != "" {
		return jsii.String(cfg.ExistingSecretName)
	}
	return secret.SecretArn()
}
