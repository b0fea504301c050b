package lambdarun

import (
	"context"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// sdkCRC32MiddlewareID is the id of the DynamoDB client's own response
// checksum middleware (service/dynamodb/internal/customizations).
const sdkCRC32MiddlewareID = "DynamoDB:ResponseChecksumValidation"

// DynamoDBOptions adjusts a DynamoDB client the way both functions need:
// its response CRC32 check validates a response only when the response
// carries a checksum (X-Amz-Crc32), as the SDK documents.
//
// Why: the SDK's own middleware (aws-sdk-go-v2 v1.73 of service/dynamodb,
// internal/customizations/checksum.go) ignores whether the header was
// there and compares a response without one against 0. Its Close then
// fails, and the SDK logs "failed to close HTTP response body ...: response
// did not match expected checksum, 0, N" at WARN. DynamoDB Local sends no
// X-Amz-Crc32 on error responses, so every ConditionalCheckFailedException
// (a duplicate delivery's claim, a pacer slot taken by another instance)
// logged a warning that meant nothing: the body had been read whole and
// the connection was reused. Whether DynamoDB itself sends
// the header on errors is not documented; this option makes the client
// right either way (upstream: aws/aws-sdk-go-v2 issue 3545).
func DynamoDBOptions(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, replaceDynamoDBCRC32Check)
}

func replaceDynamoDBCRC32Check(stack *middleware.Stack) error {
	if _, ok := stack.Deserialize.Get(sdkCRC32MiddlewareID); !ok {
		return nil // disabled (DisableValidateResponseChecksum): nothing to replace
	}
	if _, err := stack.Deserialize.Swap(sdkCRC32MiddlewareID, crc32WhenSent{}); err != nil {
		return fmt.Errorf("replace DynamoDB response checksum check: %w", err)
	}
	return nil
}

// crc32WhenSent validates a DynamoDB response body against its X-Amz-Crc32
// header when the header is present; without it, the body is passed on
// untouched. A mismatch is reported by the body's Close, as the SDK's own
// check does.
type crc32WhenSent struct{}

func (crc32WhenSent) ID() string { return sdkCRC32MiddlewareID }

func (crc32WhenSent) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, metadata, err := next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, metadata, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.Body == nil {
		return out, metadata, nil
	}
	header := resp.Header.Get("X-Amz-Crc32")
	if header == "" {
		return out, metadata, nil
	}
	want, err := strconv.ParseUint(header, 10, 32)
	if err != nil {
		return out, metadata, fmt.Errorf("parse DynamoDB response checksum header X-Amz-Crc32 %q: %w", header, err)
	}
	hasher := crc32.NewIEEE()
	resp.Body = &crc32CheckedBody{Reader: io.TeeReader(resp.Body, hasher), body: resp.Body, hasher: hasher, want: uint32(want)}
	return out, metadata, nil
}

// crc32CheckedBody computes the CRC32 of what is read and compares it on
// Close, after the SDK has read (or drained) the whole body.
type crc32CheckedBody struct {
	io.Reader
	body   io.Closer
	hasher hash.Hash32
	want   uint32
}

func (b *crc32CheckedBody) Close() error {
	closeErr := b.body.Close()
	if got := b.hasher.Sum32(); got != b.want {
		return fmt.Errorf("DynamoDB response CRC32 %d does not match its X-Amz-Crc32 header %d", got, b.want)
	}
	return closeErr
}
