package main

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// The bucket and key the sample event (events/sqs-s3-put.json) names.
const sampleBucket, sampleKey = "geolocate-local-uploads", "harbour at dusk.jpg"

// localParts are the parts `geolocate local --serve` starts for the
// function: an in-memory S3 with one bucket, a fresh table in the shared
// DynamoDB Local, and the service simulator accepting a fake key.
type localParts struct {
	s3      *awsparts.S3
	db      *awsparts.DynamoDB
	table   string
	bucket  string
	sim     *geosim.Server
	simURL  string
	fakeKey string
}

func startLocalParts(t *testing.T, bucket, fakeKey string) *localParts {
	t.Helper()
	s3srv, err := awsparts.StartS3()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s3srv.Close() })
	if err := s3srv.CreateBucket(t.Context(), bucket); err != nil {
		t.Fatal(err)
	}
	db := awspartstest.SharedDynamoDB(t)
	// Unique: the DynamoDB Local is shared across tests and runs of -count.
	table := fmt.Sprintf("predictor-test-%d", time.Now().UnixNano())
	if err := db.CreateTable(t.Context(), table); err != nil {
		t.Fatal(err)
	}
	sim := geosim.New(func(c *geosim.Config) { c.DemoKey = fakeKey })
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return &localParts{s3: s3srv, db: db, table: table, bucket: bucket, sim: sim, simURL: srv.URL, fakeKey: fakeKey}
}

// env is the function's environment pointed at the parts (AWS_REGION
// aside: a Lambda runtime sets it itself).
func (p *localParts) env() map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL_S3":       p.s3.Endpoint(),
		"AWS_ENDPOINT_URL_DYNAMODB": p.db.Endpoint(),
		"AWS_ACCESS_KEY_ID":         "local",
		"AWS_SECRET_ACCESS_KEY":     "local",
		envvars.TableName:           p.table,
		envvars.APIURL:              p.simURL,
		envvars.APIKey:              p.fakeKey,
		envvars.BucketName:          p.bucket,
	}
}

// uploadSample uploads the sample image the sample event names, as
// `geolocate local --serve` does: with the local client, which sends no
// checksum (S3 then computes its default CRC64NVME).
func (p *localParts) uploadSample(t *testing.T) *s3.PutObjectOutput {
	t.Helper()
	image, err := os.ReadFile(filepath.Join("..", "..", "testdata", "images", sampleKey))
	if err != nil {
		t.Fatal(err)
	}
	put, err := p.s3.Client().PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(p.bucket), Key: aws.String(sampleKey), Body: bytes.NewReader(image),
	})
	if err != nil {
		t.Fatal(err)
	}
	return put
}
