package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
)

// keyProvider reads the key from Secrets Manager (cached across warm
// invocations, as the predictor does) or, for local runs, from GEO_API_KEY.
func keyProvider(cfg monitor.Config, loadAWS func() (aws.Config, error)) (monitor.KeyProvider, error) {
	if cfg.SecretID == "" {
		return secretkey.Static(cfg.APIKey), nil
	}
	c, err := loadAWS()
	if err != nil {
		return nil, err
	}
	return secretkey.NewSecretsManager(secretsmanager.NewFromConfig(c), cfg.SecretID)
}
