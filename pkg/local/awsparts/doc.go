// Package awsparts runs real local stand-ins for the AWS services the
// pipeline uses, for tests, `make run` and benchmarks: DynamoDB Local (the
// official jar, installed by npm) and an in-memory S3 (gofakes3). Both bind
// to 127.0.0.1 on a free port and hand out SDK clients with fake
// credentials in us-east-1.
//
// Tests should use the helpers of package awspartstest, which share one
// DynamoDB Local per test binary.
//
// # S3: how close to the real thing
//
// S3.CreateBucket makes a bucket as S3 does by default, unversioned;
// S3.CreateVersionedBucket makes one like the stack's. A middleware in
// front of gofakes3 (strictS3, s3strict.go) makes object reads answer as
// real S3 does where gofakes3 does not: If-Match, If-None-Match,
// If-Modified-Since and If-Unmodified-Since on GET and HEAD (412 and 304);
// no x-amz-version-id from an unversioned bucket, and 400 InvalidArgument
// for a version id other than "null" there; HEAD by version id on a
// versioned bucket; 405 for a delete marker's version id; 404
// NoSuchVersion for "null" on a versioned bucket; S3's default full-object
// CRC64NVME checksum on a whole-object GET with checksum mode enabled (the
// SDK's default), so the functions' clients validate what they read. The
// tests in s3strict_test.go and s3checksum_test.go pin each of these
// through the real SDK client.
//
// Still unlike S3, and not relied on by this repository:
//
//   - Suspended versioning: objects written while suspended get a hidden
//     generated id instead of "null", and PutObject reports no version id.
//     Objects written before versioning was enabled have no "null"
//     version either; only enable versioning on an empty bucket.
//   - GET/HEAD of a key whose current version is a delete marker answers
//     404 without the x-amz-delete-marker and x-amz-version-id headers.
//   - Permanently deleting the current version (DELETE with its version
//     id) does not promote the previous version: the key then reads as
//     missing, and a later plain GET of it may crash the request.
//   - Version ids are 64-character base64 strings (with "/" and "="), not
//     S3's 32 URL-safe characters; malformed ids on a versioned bucket are
//     404 NoSuchVersion, where S3 answers 400 InvalidArgument.
//   - CopyObject reports the source's version id as the copy's, and
//     ignores a source versionId and conditional copy headers.
//   - Multipart uploads, If-Match/If-None-Match on PutObject, Range and
//     the response-* overrides are gofakes3's own, unchecked here.
//   - DeleteObject on an unversioned bucket answers x-amz-delete-marker:
//     false, which S3 may omit.
//   - Virtual-hosted-style requests are not understood by the middleware
//     (S3.Client is path-style); no signatures, ACLs, policies,
//     encryption, storage classes or event notifications (the local
//     pipeline builds the notifications itself).
//   - A conditional read is judged against the object's state read just
//     before the request is served, not atomically with it.
package awsparts

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Region is the region every local client uses.
const Region = "us-east-1"

// fakeCredentials are accepted by both local services, which do not check
// signatures against real accounts.
func fakeCredentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider("localawsfakeaccesskey", "localawsfakesecretkey", "")
}
