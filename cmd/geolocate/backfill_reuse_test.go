package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// TestBackfillCountsReuseAhead: --dry-run --count-reuse reads the objects
// it would send and counts those the predictor would not pay for: copies
// within the set, and copies of a photo with an answer on record (keep:
// the digest is the stored bytes', so the test computes it itself).
func TestBackfillCountsReuseAhead(t *testing.T) {
	s3c, bucket := awspartstest.S3(t)
	ddb, table := awspartstest.DynamoDB(t)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "images", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	gradient, blue := read("gradient-64x48.jpg"), read("gradient-blue-64x48.jpg")
	puts := putObjects(t, s3c, bucket, map[string]string{
		"a/gradient.jpg": gradient, "b/gradient.jpg": gradient, "c/gradient.jpg": gradient,
		"blue.jpg": blue, "paid/blue.jpg": blue, "notes.txt": "not a photo",
	})
	// paid/blue.jpg was geolocated already, for 3 credits.
	ctx := context.Background()
	store := ledger.New(ddb, table)
	paid := ledger.ObjectRef{Bucket: bucket, Key: "paid/blue.jpg", VersionID: aws.ToString(puts["paid/blue.jpg"].VersionId)}
	sum := sha256.Sum256([]byte(blue))
	content := ledger.ContentRef{SHA256: hex.EncodeToString(sum[:]), Request: "model=default;top_n=default"}
	claim, _, err := store.Claim(ctx, paid, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.ClaimContent(ctx, content, paid, time.Minute, ledger.NoMaxAge); err != nil {
		t.Fatal(err)
	}
	if err := store.Complete(ctx, claim, ledger.Record{CreditsConsumed: 3, ContentSHA256: content.SHA256, ContentRequest: content.Request}); err != nil {
		t.Fatal(err)
	}

	// Two gradient copies (1 credit each, assumed) and blue.jpg (3, on
	// record). The samples carry no metadata, so strip sends them as
	// stored; it cannot read the text file, which the predictor rejects
	// before any call.
	for _, tt := range []struct{ mode, notCounted string }{{"keep", "0"}, {"strip", "1"}} {
		queues := &fakeQueues{}
		useAWS(t, &awsClients{objects: s3c, queues: queues, tables: ddb, stacks: fakeStacks{name: "Geo"}})
		r := runCLI(t, nil, nil, "backfill", "--bucket", bucket, "--table", table, "--dry-run", "--count-reuse", "--upload-metadata", tt.mode)
		if r.code != 0 || queues.calls != 0 {
			t.Fatalf("%s: exit %d, %d calls: %s", tt.mode, r.code, queues.calls, r.stderr)
		}
		if want := "saving about 5 credit(s); " + tt.notCounted + " not counted"; !strings.Contains(r.stderr, "3 would reuse an answer") || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: summary: want 3 reused, %q:\n%s", tt.mode, want, r.stderr)
		}
	}

	t.Run("only with a dry run", func(t *testing.T) {
		if r := runCLI(t, nil, nil, "backfill", "--bucket", bucket, "--table", table, "--count-reuse"); r.code == 0 {
			t.Errorf("accepted --count-reuse without --dry-run: %s", r.stderr)
		}
	})
}
