package awsapi

import (
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// serve starts h and returns an SDK configuration pointed at it, with
// fake credentials, as the export line of local --serve gives the CLI.
func serve(t *testing.T, h interface{ Handler() http.Handler }) (aws.Config, string) {
	t.Helper()
	srv, err := Listen(h.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDLOCALTEST", "local", ""),
		BaseEndpoint: aws.String(srv.Endpoint()),
	}, srv.Endpoint()
}
