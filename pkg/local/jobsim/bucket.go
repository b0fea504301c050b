package jobsim

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// maxListKeys is S3's page size: ListObjectVersions returns "up to 1,000
// key names" a request, fewer when MaxKeys asks (the ListObjectVersions
// API reference).
const maxListKeys = 1000

// bucket is a versioned bucket of n photos under prefix, generated, not
// stored: key i is prefix + a zero-padded i, so keys sort as their numbers
// and a page is computed from its marker. Each has one version, the
// latest; its version id and ETag are derived from i.
type bucket struct {
	name, prefix string
	n            int
	size         int64
	written      time.Time
	// Pages counts ListObjectVersions requests served.
	pages int64
}

// keyDigits fits ten million keys.
const keyDigits = 8

func (b *bucket) key(i int) string     { return fmt.Sprintf("%s%0*d.jpg", b.prefix, keyDigits, i) }
func (b *bucket) version(i int) string { return fmt.Sprintf("v%016x", uint64(i)*0x9e3779b97f4a7c15) }
func (b *bucket) etag(i int) string    { return fmt.Sprintf("\"%032x\"", uint64(i)+1) }

// index is the position of the first key after marker (0 with none).
func (b *bucket) index(marker string) int {
	if marker == "" {
		return 0
	}
	return sort.Search(b.n, func(i int) bool { return b.key(i) > marker })
}

func (b *bucket) ListObjectVersions(_ context.Context, in *s3.ListObjectVersionsInput, _ ...func(*s3.Options)) (*s3.ListObjectVersionsOutput, error) {
	b.pages++
	if aws.ToString(in.Bucket) != b.name {
		return nil, &types.NoSuchBucket{Message: aws.String("The specified bucket does not exist")}
	}
	if in.VersionIdMarker != nil && in.KeyMarker == nil {
		return nil, fmt.Errorf("jobsim: InvalidArgument: a version-id marker cannot be specified without a key marker")
	}
	limit := maxListKeys
	if in.MaxKeys != nil && *in.MaxKeys > 0 && int(*in.MaxKeys) < limit {
		limit = int(*in.MaxKeys)
	}
	out := &s3.ListObjectVersionsOutput{Name: in.Bucket, Prefix: in.Prefix, KeyMarker: in.KeyMarker,
		VersionIdMarker: in.VersionIdMarker, MaxKeys: aws.Int32(int32(limit))}
	prefix := aws.ToString(in.Prefix)
	if !strings.HasPrefix(b.prefix, prefix) && !strings.HasPrefix(prefix, b.prefix) {
		return out, nil
	}
	// With one version a key, a version-id marker is the key's only
	// version: listing resumes after the key either way.
	i := b.index(aws.ToString(in.KeyMarker))
	for ; i < b.n && len(out.Versions) < limit; i++ {
		k := b.key(i)
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		out.Versions = append(out.Versions, types.ObjectVersion{Key: aws.String(k), VersionId: aws.String(b.version(i)),
			ETag: aws.String(b.etag(i)), Size: aws.Int64(b.size), IsLatest: aws.Bool(true),
			LastModified: aws.Time(b.written), StorageClass: types.ObjectVersionStorageClassStandard})
	}
	if i < b.n {
		last := out.Versions[len(out.Versions)-1]
		out.IsTruncated = aws.Bool(true)
		out.NextKeyMarker, out.NextVersionIdMarker = last.Key, last.VersionId
	} else {
		out.IsTruncated = aws.Bool(false)
	}
	return out, nil
}

// holds reports whether o names one of the bucket's versions as listed
// (key, version id and ETag, quoted or not).
func (b *bucket) holds(o jobmsg.Object) bool {
	if o.Bucket != b.name || !strings.HasPrefix(o.Key, b.prefix) {
		return false
	}
	i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(o.Key, b.prefix), ".jpg"))
	return err == nil && i >= 0 && i < b.n && o.Key == b.key(i) && o.VersionID == b.version(i) &&
		(o.ETag == "" || strings.Trim(o.ETag, `"`) == strings.Trim(b.etag(i), `"`))
}
