package awsparts_test

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc64"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestGetObjectCarriesS3sDefaultChecksum: S3 stores a full-object CRC64NVME
// for an object uploaded without a checksum and returns it to a GetObject
// with checksum mode enabled that reads the whole object, not to a ranged
// one (Checking object integrity, S3 User Guide). The SDK's default client
// asks for it and validates the body; without it the SDK logged "Response
// has no supported checksum".
func TestGetObjectCarriesS3sDefaultChecksum(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		client, bucket := bucketFixture(t, versioned)
		const body = "harbour at dusk, as bytes"
		if _, err := client.PutObject(t.Context(), &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String("photo.jpg"), Body: strings.NewReader(body),
		}); err != nil {
			t.Fatal(err)
		}
		sum := crc64.Checksum([]byte(body), crc64.MakeTable(0x9a6c_9329_ac4b_c9b5))
		want := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, sum))

		// As the functions' clients do: the SDK's defaults, which send
		// x-amz-checksum-mode: ENABLED and validate what comes back.
		validating := func(o *s3.Options) { o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported }
		out, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("photo.jpg")}, validating)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(out.Body) // a wrong checksum fails this read
		out.Body.Close()
		if err != nil || string(got) != body {
			t.Fatalf("versioned=%v: body %q, %v", versioned, got, err)
		}
		if aws.ToString(out.ChecksumCRC64NVME) != want || out.ChecksumType != types.ChecksumTypeFullObject {
			t.Errorf("versioned=%v: checksum %q type %q, want %q FULL_OBJECT", versioned, aws.ToString(out.ChecksumCRC64NVME), out.ChecksumType, want)
		}

		ranged, err := client.GetObject(t.Context(), &s3.GetObjectInput{
			Bucket: aws.String(bucket), Key: aws.String("photo.jpg"), Range: aws.String("bytes=0-6"),
		}, validating)
		if err != nil {
			t.Fatal(err)
		}
		part, _ := io.ReadAll(ranged.Body)
		ranged.Body.Close()
		if string(part) != body[:7] || ranged.ChecksumCRC64NVME != nil {
			t.Errorf("versioned=%v: ranged GET: body %q, checksum %v, want the first 7 bytes and no checksum", versioned, part, aws.ToString(ranged.ChecksumCRC64NVME))
		}

		// Without checksum mode (the local rig's own clients), no checksum.
		plain, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("photo.jpg")})
		if err != nil {
			t.Fatal(err)
		}
		plain.Body.Close()
		if plain.ChecksumCRC64NVME != nil {
			t.Errorf("versioned=%v: checksum %q without checksum mode", versioned, aws.ToString(plain.ChecksumCRC64NVME))
		}
	}
}
