package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// reuseCount is what backfill --dry-run --count-reuse finds: of the objects
// it would send, those whose answer the predictor would reuse (reuseResults
// =content) and the credits that saves. Knowing it takes each object's
// content digest, that is a GET of every object that would be sent.
type reuseCount struct {
	uploadMetadata string
	// seen maps a digest already met to the credits a copy of it saves.
	seen                      map[string]int
	reused, saved, notCounted int
}

// objectGetter is the part of *s3.Client that reads an object.
type objectGetter interface {
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// callCredits is what a paid answer for a photo met first in this backfill
// is assumed to cost: the default model's one credit (the stack's own model
// may cost more; see predictor.Config.ExpectedCost).
const callCredits = 1

// count reads obj and counts it: a copy of an object met earlier in the
// set, or of one with an answer on record, would reuse that answer.
func (rc *reuseCount) count(ctx context.Context, objects any, store *ledger.Store, obj s3event.ObjectCreated) error {
	getter, ok := objects.(objectGetter)
	if !ok {
		return errors.New("--count-reuse: this S3 client cannot read objects")
	}
	if obj.Size > imageformat.DefaultMaxImageBytes {
		rc.notCounted++ // its digest is the downscaled JPEG's: only the predictor makes it
		return nil
	}
	in := &s3.GetObjectInput{Bucket: aws.String(obj.Bucket), Key: aws.String(obj.Key)}
	if obj.VersionID != "" {
		in.VersionId = aws.String(obj.VersionID)
	} else if obj.ETag != "" {
		in.IfMatch = aws.String(obj.ETag) // the version listed, not a later overwrite
	}
	out, err := getter.GetObject(ctx, in)
	if err != nil {
		return fmt.Errorf("--count-reuse: read %s: %w", obj.Key, err)
	}
	defer out.Body.Close()
	sum, _, err := predictor.ContentDigest(out.Body, rc.uploadMetadata)
	if err != nil {
		rc.notCounted++ // not an image the stripper reads: rejected before any call
		return nil
	}
	if credits, ok := rc.seen[sum]; ok {
		rc.reused++
		rc.saved += credits
		return nil
	}
	rc.seen[sum] = callCredits
	if store == nil {
		return nil
	}
	paid, err := store.ReusableAnswer(ctx, sum, ledger.NoMaxAge)
	if err != nil {
		return fmt.Errorf("--count-reuse: %s: %w", obj.Key, err)
	}
	if paid != nil {
		rc.seen[sum] = paid.CreditsConsumed
		rc.reused++
		rc.saved += paid.CreditsConsumed
	}
	return nil
}

// summary is the dry run's line about reuse.
func (rc *reuseCount) summary() string {
	return fmt.Sprintf("backfill: %d would reuse an answer (a copy in this backfill or an answer on record for the same bytes, uploadMetadata=%s), "+
		"saving about %d credit(s); %d not counted (over the size limit, or not an image); this read every object that would be sent, "+
		"and assumes the stack's model and top_n are those of the answers on record\n",
		rc.reused, rc.uploadMetadata, rc.saved, rc.notCounted)
}
