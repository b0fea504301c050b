package awsapi

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
)

func TestS3NotificationsSeeEveryObjectCreatedThroughTheSDKClient(t *testing.T) {
	ctx := context.Background()
	backend, err := awsparts.StartS3()
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	if err := backend.CreateVersionedBucket(ctx, "uploads"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var created []CreatedObject
	front, err := NewS3Notifications(backend.Endpoint(), func(o CreatedObject) {
		mu.Lock()
		defer mu.Unlock()
		created = append(created, o)
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := serve(t, front)
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })

	put, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("uploads"), Key: aws.String("a b+c%/é.jpg"), Body: bytes.NewReader([]byte("jpeg"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("uploads"), Key: aws.String("a b+c%/é.jpg")}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("uploads"), Key: aws.String("copy.jpg"), CopySource: aws.String("uploads/a%20b%2Bc%25/%C3%A9.jpg")}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(created) != 2 {
		t.Fatalf("created = %+v, want the put and the copy (not the get)", created)
	}
	if c := created[0]; c.Key != "a b+c%/é.jpg" || c.Bucket != "uploads" || c.EventName != "ObjectCreated:Put" || c.VersionID != aws.ToString(put.VersionId) || c.ETag != aws.ToString(put.ETag) {
		t.Errorf("put seen as %+v, PutObject said version %s ETag %s", c, aws.ToString(put.VersionId), aws.ToString(put.ETag))
	}
	if c := created[1]; c.Key != "copy.jpg" || c.EventName != "ObjectCreated:Copy" {
		t.Errorf("copy seen as %+v", c)
	}
}
