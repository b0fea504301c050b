package lambdarun

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// LoadAWSConfig loads the default configuration. Endpoints come from the
// SDK's own AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> variables, which is
// how local runs point the same code at local parts. The SDK logs into
// logger (SDKLogger), so its lines are JSON like the function's own.
func LoadAWSConfig(ctx context.Context, logger *slog.Logger) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(SDKLogger(logger)))
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return cfg, nil
}

// S3Options uses path-style addressing whenever S3 is redirected to a custom
// endpoint: local S3 servers listen on 127.0.0.1 and cannot serve
// bucket-named hosts.
func S3Options(o *s3.Options) {
	if os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != "" {
		o.UsePathStyle = true
	}
}
