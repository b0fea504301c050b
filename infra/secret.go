package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
)

// apiKeySecret imports the configured secret or creates one for the geo_
// key. created is the new secret, or nil when one is imported.
//
// A created secret has no value in the template at all, neither a
// SecretString nor a GenerateSecretString: CloudFormation writes a new
// version whenever either property changes, so a template that carried an
// initial value could, on some later update, overwrite the key the operator
// put in. Without one the stack creates an empty secret (no version), and
// only the operator's put-secret-value ever gives it a value. Until then
// the functions find no key (key_unavailable) and spend nothing.
//
// The secret holds a credential, not data: it is deleted with the stack
// (Secrets Manager keeps it for its recovery window), whether or not
// removeOnDestroy keeps the data, so no live key outlives the pipeline.
func apiKeySecret(stack awscdk.Stack, cfg Config) (secret awssecretsmanager.ISecret, created awssecretsmanager.Secret) {
	switch {
	case cfg.ExistingSecretArn != "":
		return awssecretsmanager.Secret_FromSecretCompleteArn(stack, jsii.String("ApiKeySecret"), jsii.String(cfg.ExistingSecretArn)), nil
	case cfg.ExistingSecretName != "":
		return awssecretsmanager.Secret_FromSecretNameV2(stack, jsii.String("ApiKeySecret"), jsii.String(cfg.ExistingSecretName)), nil
	}
	created = awssecretsmanager.NewSecret(stack, jsii.String("ApiKeySecret"), &awssecretsmanager.SecretProps{
		Description:   jsii.String("API key (geo_...) of the image geolocation service. Set it with: aws secretsmanager put-secret-value --secret-id <SecretArn output> --secret-string <key>"),
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	// CDK fills in a GenerateSecretString when no value is given.
	cfn := created.Node().DefaultChild().(awssecretsmanager.CfnSecret)
	cfn.AddPropertyDeletionOverride(jsii.String("GenerateSecretString"))
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
