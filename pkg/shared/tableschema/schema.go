// Package tableschema is the single definition of the results table's key
// schema and index. The CDK stack and the local pipeline both build the table
// from it, so the table a user deploys and the one `make run` creates cannot
// drift apart.
package tableschema

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of the table's keys and index keys. All are strings.
const (
	// PartitionKey holds the item family and identity, e.g. "OBJ#<bucket>#<key>".
	PartitionKey = "pk"
	// SortKey distinguishes items within a partition, e.g. "V#<version id or ETag>".
	SortKey = "sk"

	// StatusIndex lets operators list records by status and time without a scan.
	StatusIndex = "by-status"
	// StatusIndexPartitionKey is "<status>#<YYYY-MM-DD>" (UTC): bucketing by day
	// keeps one status from concentrating every write on a single index partition.
	StatusIndexPartitionKey = "status_day"
	// StatusIndexSortKey is the record's last update time, RFC 3339 with
	// nanoseconds in UTC, so it sorts lexically by time.
	StatusIndexSortKey = "updated_at"

	// TTLAttribute holds an expiry time in Unix seconds; items without it never expire.
	TTLAttribute = "expires_at"
)

// StreamViewType is the table's stream: the item before and after each
// change. The results pipe (infra/events.go) decides from both images that a
// record has just become final, so a rewrite of a final record publishes
// nothing. The stream is always on, events or not: disabling a stream that
// a pipe reads leaves that pipe unusable, and a stream nobody reads costs
// nothing.
const StreamViewType = types.StreamViewTypeNewAndOldImages

// CreateTableInput describes the table for CreateTable, on-demand and with
// its stream, as the stack provisions it. Used by the local pipeline and tests.
func CreateTableInput(tableName string) *dynamodb.CreateTableInput {
	str := types.ScalarAttributeTypeS
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(tableName),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(PartitionKey), AttributeType: str},
			{AttributeName: aws.String(SortKey), AttributeType: str},
			{AttributeName: aws.String(StatusIndexPartitionKey), AttributeType: str},
			{AttributeName: aws.String(StatusIndexSortKey), AttributeType: str},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(PartitionKey), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(SortKey), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(StatusIndex),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(StatusIndexPartitionKey), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(StatusIndexSortKey), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: StreamViewType},
	}
}

// TimeToLiveInput enables expiry on TTLAttribute, as the stack does.
func TimeToLiveInput(tableName string) *dynamodb.UpdateTimeToLiveInput {
	return &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(tableName),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(TTLAttribute),
			Enabled:       aws.Bool(true),
		},
	}
}
