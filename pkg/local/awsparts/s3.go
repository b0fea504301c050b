package awsparts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3 is an in-memory S3 (gofakes3) served on a free port of 127.0.0.1,
// behind a small middleware (strictS3) that makes object reads answer as
// real S3 does where gofakes3 does not; the package documentation lists
// what still differs.
type S3 struct {
	backend  *s3mem.Backend
	server   *http.Server
	endpoint string
	served   chan struct{}
}

// StartS3 starts an empty in-memory S3. The caller must Close it.
func StartS3() (*S3, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for local S3: %w", err)
	}
	backend := s3mem.New()
	s := &S3{
		backend:  backend,
		server:   &http.Server{Handler: newStrictS3(gofakes3.New(backend).Server(), backend), ReadHeaderTimeout: 10 * time.Second},
		endpoint: "http://" + listener.Addr().String(),
		served:   make(chan struct{}),
	}
	go func() {
		defer close(s.served)
		_ = s.server.Serve(listener) // returns http.ErrServerClosed on Close
	}()
	return s, nil
}

// Endpoint is the base URL, e.g. "http://127.0.0.1:40125".
func (s *S3) Endpoint() string { return s.endpoint }

// Client returns a path-style client of this S3 (fake static credentials,
// us-east-1). Checksums are only computed where S3 requires them, as
// gofakes3 does not implement every flexible-checksum mode. optFns adjust
// its options.
func (s *S3) Client(optFns ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		Region:                     Region,
		Credentials:                fakeCredentials(),
		BaseEndpoint:               aws.String(s.endpoint),
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}, optFns...)
}

// CreateBucket creates a bucket as S3 does by default: with versioning
// never enabled. PutObject then reports no version id, an overwrite
// replaces the object, a delete removes it, and a request naming any
// version id other than "null" fails with 400 InvalidArgument. This is how
// a user's existing bucket may be; the stack's own bucket is versioned
// (CreateVersionedBucket).
func (s *S3) CreateBucket(ctx context.Context, name string) error {
	if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	return nil
}

// CreateVersionedBucket creates a bucket and enables versioning on it
// (PutBucketVersioning, before any object is written), as the stack does
// for its upload bucket: every PutObject gets a version id, overwritten
// versions stay readable by id, and a delete adds a delete marker.
func (s *S3) CreateVersionedBucket(ctx context.Context, name string) error {
	if err := s.CreateBucket(ctx, name); err != nil {
		return err
	}
	_, err := s.Client().PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
		Bucket:                  aws.String(name),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled},
	})
	if err != nil {
		return fmt.Errorf("enable versioning on bucket %s: %w", name, err)
	}
	return nil
}

// Close stops the server; the data is lost.
func (s *S3) Close() error {
	err := s.server.Close()
	<-s.served
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("close local S3: %w", err)
	}
	return nil
}
