// Package awscalls records the AWS API calls an SDK client makes: service,
// operation and the input fields that name the resource, so a test can
// compare what the code really calls with the IAM accesses the stack grants
// (infra/policy_test.go).
//
// Register a Recorder on a client with
//
//	o.APIOptions = append(o.APIOptions, rec.Register)
//
// or on every client of a configuration with
//
//	cfg.APIOptions = append(cfg.APIOptions, rec.Register)
package awscalls

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Call is one API operation (not one retried attempt).
type Call struct {
	Service   string // the SDK's service id: "S3", "DynamoDB", "Secrets Manager", "SQS"
	Operation string // "GetObject", "UpdateItem", ...
	// The resource-identifying input fields, empty when the input has none.
	Bucket, Key, VersionID string
	TableName, IndexName   string
	SecretID               string
	QueueURL, QueueName    string
	// ItemOperations are the item operations of a transaction
	// (TransactWriteItems), each authorized as its own IAM action.
	ItemOperations []string
	// Failed is true when the call returned an error (it was still made).
	Failed bool
}

// Recorder collects the calls of the clients it is registered on. It is
// safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	calls []Call
}

// Register adds the recorder to a client's middleware stack.
func (r *Recorder) Register(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("awscallsRecorder",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c := describe(in.Parameters)
			c.Service = awsmiddleware.GetServiceID(ctx)
			c.Operation = awsmiddleware.GetOperationName(ctx)
			out, md, err := next.HandleInitialize(ctx, in)
			c.Failed = err != nil
			r.mu.Lock()
			r.calls = append(r.calls, c)
			r.mu.Unlock()
			return out, md, err
		}), middleware.After)
}

// Add records a call made without an SDK client's middleware, for a fake
// that stands for a client behind the interface the code uses (see
// pkg/secretkey/secretkeytest).
func (r *Recorder) Add(c Call) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// AddSecretsManager records a Secrets Manager call answered by a fake
// (pkg/secretkey/secretkeytest's RecordTo takes it), which cannot import
// this package: it ships beside the code and must not depend on the rig.
func (r *Recorder) AddSecretsManager(operation, secretID string, failed bool) {
	r.Add(Call{Service: "Secrets Manager", Operation: operation, SecretID: secretID, Failed: failed})
}

// Calls returns the calls so far, in the order they finished.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Reset forgets the calls so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.calls = nil
	r.mu.Unlock()
}

// IAMActions are the actions IAM authorizes a call as: the service prefix
// and operation, with S3's exceptions (HEAD authorizes as GetObject; a
// request for a version id as GetObjectVersion; ListObjectsV2 as ListBucket)
// and SQS's (a batch as its single action: SendMessageBatch as SendMessage).
func (c Call) IAMActions() []string {
	prefix, ok := map[string]string{
		"S3": "s3", "DynamoDB": "dynamodb", "Secrets Manager": "secretsmanager", "SQS": "sqs",
	}[c.Service]
	if !ok {
		return nil
	}
	if len(c.ItemOperations) > 0 {
		// IAM has no action for a transaction: each item is authorized
		// as its operation (dynamodb:UpdateItem, ...).
		var actions []string
		for _, op := range c.ItemOperations {
			if a := prefix + ":" + op; !slices.Contains(actions, a) {
				actions = append(actions, a)
			}
		}
		return actions
	}
	op := c.Operation
	if c.Service == "S3" {
		switch op {
		case "HeadObject", "GetObject":
			op = "GetObject"
			if c.VersionID != "" {
				op = "GetObjectVersion"
			}
		case "ListObjectsV2", "ListObjects":
			op = "ListBucket"
		case "ListObjectVersions":
			op = "ListBucketVersions"
		}
	}
	if c.Service == "SQS" {
		// "You cannot set permissions explicitly for SendMessageBatch,
		// DeleteMessageBatch, or ChangeMessageVisibilityBatch. Instead,
		// setting permissions for SendMessage, DeleteMessage, or
		// ChangeMessageVisibility sets permissions for the corresponding
		// batch versions" (Amazon SQS batch actions,
		// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-batch-api.html).
		op = strings.TrimSuffix(op, "Batch")
	}
	return []string{prefix + ":" + op}
}

// fields maps an input field name to where describe stores it.
var fields = map[string]func(*Call) *string{
	"Bucket":    func(c *Call) *string { return &c.Bucket },
	"Key":       func(c *Call) *string { return &c.Key },
	"VersionId": func(c *Call) *string { return &c.VersionID },
	"TableName": func(c *Call) *string { return &c.TableName },
	"IndexName": func(c *Call) *string { return &c.IndexName },
	"SecretId":  func(c *Call) *string { return &c.SecretID },
	"QueueUrl":  func(c *Call) *string { return &c.QueueURL },
	"QueueName": func(c *Call) *string { return &c.QueueName },
}

// describe reads the resource fields of an SDK input (a pointer to a
// struct of *string fields).
func describe(params any) Call {
	var c Call
	if tx, ok := params.(*dynamodb.TransactWriteItemsInput); ok {
		return describeTransaction(tx)
	}
	v := reflect.ValueOf(params)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return c
	}
	v = v.Elem()
	for name, dst := range fields {
		f := v.FieldByName(name)
		if f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.String {
			*dst(&c) = f.Elem().String()
		}
	}
	return c
}

// describeTransaction names a transaction's table (the first item's) and
// the operation of each item.
func describeTransaction(tx *dynamodb.TransactWriteItemsInput) Call {
	var c Call
	for _, item := range tx.TransactItems {
		op, table := "", (*string)(nil)
		switch {
		case item.Update != nil:
			op, table = "UpdateItem", item.Update.TableName
		case item.Put != nil:
			op, table = "PutItem", item.Put.TableName
		case item.Delete != nil:
			op, table = "DeleteItem", item.Delete.TableName
		case item.ConditionCheck != nil:
			op, table = "ConditionCheckItem", item.ConditionCheck.TableName
		}
		if op != "" {
			c.ItemOperations = append(c.ItemOperations, op)
		}
		if c.TableName == "" && table != nil {
			c.TableName = *table
		}
	}
	return c
}
