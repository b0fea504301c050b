package jobs

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// entry is one object version of a manifest chunk, with short attribute
// names: a chunk holds up to MaxChunkObjects of them, and each name is
// stored (and paid for) in every entry.
type entry struct {
	Key       string `dynamodbav:"k"`
	VersionID string `dynamodbav:"v,omitempty"`
	ETag      string `dynamodbav:"e,omitempty"`
	Size      int64  `dynamodbav:"s,omitempty"`
	// Replaces is a reprocess's run whose result this object's answer
	// replaces ("" the upload's).
	Replaces string `dynamodbav:"r,omitempty"`
}

// Chunk bounds. DynamoDB items are at most 400 KB; a chunk stays under
// MaxChunkBytes (measured as entrySize estimates) so that a key of S3's
// longest (1,024 bytes) never pushes one over, and holds at most
// MaxChunkObjects (one ListObjectVersions page's worth).
const (
	MaxChunkBytes   = 350_000
	MaxChunkObjects = 1000
	// entryOverhead is an entry's bytes beyond its strings: the attribute
	// names, the size's number and DynamoDB's per-element bytes.
	entryOverhead = 32
)

// entrySize estimates e's stored bytes.
func entrySize(e entry) int {
	return len(e.Key) + len(e.VersionID) + len(e.ETag) + len(e.Replaces) + entryOverhead
}

// chunkItem is a manifest chunk as stored.
type chunkItem struct {
	PK      string  `dynamodbav:"pk"`
	SK      string  `dynamodbav:"sk"`
	Objects []entry `dynamodbav:"objects"`
}

func chunkSortKey(n int) string { return fmt.Sprintf("%s%08d", ChunkSortKeyPrefix, n) }

// splitChunks cuts entries into chunks within the bounds, in order.
func splitChunks(entries []entry) [][]entry {
	var chunks [][]entry
	var cur []entry
	size := 0
	for _, e := range entries {
		n := entrySize(e)
		if len(cur) > 0 && (len(cur) == MaxChunkObjects || size+n > MaxChunkBytes) {
			chunks = append(chunks, cur)
			cur, size = nil, 0
		}
		cur = append(cur, e)
		size += n
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// putChunk writes chunk n of job id. Writing it again (a run that failed
// before recording it) replaces it whole: no run fed from it yet, since
// feeding reads only chunks the job item counts.
func (s *Store) putChunk(ctx context.Context, id string, n int, objects []entry) error {
	av, err := attributevalue.MarshalMap(chunkItem{PK: JobPartitionPrefix + id, SK: chunkSortKey(n), Objects: objects})
	if err != nil {
		return fmt.Errorf("encode chunk %d of job %s: %w", n, id, err)
	}
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: av}); err != nil {
		return fmt.Errorf("write chunk %d of job %s: %w", n, id, err)
	}
	return nil
}

// getChunk reads chunk n of job id.
func (s *Store) getChunk(ctx context.Context, id string, n int) ([]entry, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: key(JobPartitionPrefix+id, chunkSortKey(n)),
		ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read chunk %d of job %s: %w", n, id, err)
	}
	if out.Item == nil {
		return nil, fmt.Errorf("chunk %d of job %s is missing", n, id)
	}
	var c chunkItem
	if err := attributevalue.UnmarshalMap(out.Item, &c); err != nil {
		return nil, fmt.Errorf("decode chunk %d of job %s: %w", n, id, err)
	}
	return c.Objects, nil
}
