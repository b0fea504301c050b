package awsapi

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

func TestSecretsManagerAnswersAddedSecretsThroughTheSDKClient(t *testing.T) {
	ctx := context.Background()
	s := NewSecretsManager()
	arn := s.AddSecret("geolocate/api-key", "value-1")
	cfg, _ := serve(t, s)
	client := secretsmanager.NewFromConfig(cfg)
	for _, id := range []string{arn, "geolocate/api-key"} {
		out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
		if err != nil || aws.ToString(out.SecretString) != "value-1" || aws.ToString(out.ARN) != arn || out.CreatedDate == nil {
			t.Errorf("GetSecretValue(%s) = %+v, %v", id, out, err)
		}
	}
	var missing *types.ResourceNotFoundException
	if _, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("other")}); !errors.As(err, &missing) {
		t.Errorf("GetSecretValue of a missing secret: %v, want ResourceNotFoundException", err)
	}
}
