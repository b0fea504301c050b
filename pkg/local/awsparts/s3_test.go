package awsparts_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
)

func TestS3VersionedRoundTrip(t *testing.T) {
	srv, err := awsparts.StartS3()
	if err != nil {
		t.Fatalf("StartS3: %v", err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.Endpoint(), "http://127.0.0.1:") {
		t.Errorf("Endpoint() = %q, want an http://127.0.0.1 address", srv.Endpoint())
	}
	ctx := context.Background()
	if err := srv.CreateVersionedBucket(ctx, "uploads"); err != nil {
		t.Fatalf("CreateVersionedBucket: %v", err)
	}
	client := srv.Client()
	key := "photos/with space/é+%.jpg"
	var versions []string
	for _, body := range []string{"first", "second"} {
		out, err := client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String("uploads"), Key: aws.String(key), Body: strings.NewReader(body),
			ContentType: aws.String("image/jpeg"),
		})
		if err != nil {
			t.Fatalf("PutObject: %v", err)
		}
		if aws.ToString(out.VersionId) == "" {
			t.Fatalf("PutObject returned no version id: versioning is off")
		}
		versions = append(versions, aws.ToString(out.VersionId))
	}
	if versions[0] == versions[1] {
		t.Fatalf("two writes got the same version id %q", versions[0])
	}
	got, err := client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String("uploads"), Key: aws.String(key), VersionId: aws.String(versions[0]),
	})
	if err != nil {
		t.Fatalf("GetObject of the first version: %v", err)
	}
	defer got.Body.Close()
	body, _ := io.ReadAll(got.Body)
	if string(body) != "first" || aws.ToString(got.ContentType) != "image/jpeg" {
		t.Errorf("first version = %q (%s), want \"first\" (image/jpeg)", body, aws.ToString(got.ContentType))
	}

	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := client.ListBuckets(ctx, &s3.ListBucketsInput{}); err == nil {
		t.Error("S3 still answers after Close")
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
