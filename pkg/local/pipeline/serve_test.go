package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// startServe runs Serve until the test ends and returns the export line's
// environment and the progress output.
func startServe(t *testing.T, dir string) (map[string]string, *syncbuf.Buffer, func() error) {
	t.Helper()
	db := awspartstest.SharedDynamoDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out syncbuf.Buffer
	done := make(chan error, 1)
	ready := make(chan map[string]string, 1)
	go func() {
		done <- Serve(ctx, Options{
			ImagesDir: dir,
			Getenv:    noServiceEnv,
			DynamoDB:  db,
			Table:     "serve-" + fmt.Sprint(time.Now().UnixNano()),
			Progress:  &out,
		}, func(o *ServeOptions) {
			o.Alarms = []string{"JobStalled"}
			o.Ready = func(env map[string]string) { ready <- env }
		})
	}()
	stopped := false
	stop := func() error {
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() {
		if !stopped {
			_ = stop()
		}
	})
	select {
	case env := <-ready:
		return env, &out, stop
	case err := <-done:
		t.Fatalf("Serve returned early: %v\n%s", err, out.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("Serve never got ready:\n%s", out.String())
	}
	return nil, nil, nil
}

// sdkConfig is what the SDK loads from the export line: its region,
// credentials and per-service endpoints.
func sdkConfig(env map[string]string, endpointVar string) aws.Config {
	return aws.Config{
		Region:       env["AWS_REGION"],
		Credentials:  credentials.NewStaticCredentialsProvider(env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], ""),
		BaseEndpoint: aws.String(env[endpointVar]),
	}
}

func TestServeRunsAWholeStackBehindItsExportLine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	jpeg, err := os.ReadFile(filepath.Join(sampleImagesDir, "gradient-64x48.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a b.jpg", jpeg)
	env, out, stop := startServe(t, dir)

	text := out.String()
	if !strings.Contains(text, "uploaded  s3://"+DefaultBucket+"/a b.jpg") || !strings.Contains(text, "not yet processed") {
		t.Errorf("upload not reported:\n%s", text)
	}
	line := exportLine(env)
	if !strings.Contains(text, line) {
		t.Errorf("the export line printed is not the environment Ready got:\n%s", text)
	}
	for _, name := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_LAMBDA",
		"AWS_ENDPOINT_URL_EVENTBRIDGE", "AWS_ENDPOINT_URL_CLOUDWATCH", "AWS_ENDPOINT_URL_SNS", "AWS_ENDPOINT_URL_CLOUDFORMATION", "AWS_ENDPOINT_URL_STS"} {
		if !strings.HasPrefix(env[name], "http://127.0.0.1:") {
			t.Errorf("%s = %q, want a 127.0.0.1 endpoint", name, env[name])
		}
	}
	if env["AWS_DEFAULT_REGION"] == "" || !strings.HasPrefix(env[envvars.QueueURL], env["AWS_ENDPOINT_URL_SQS"]) || !strings.HasPrefix(env[envvars.APIKey], "geo_sim_") {
		t.Errorf("export line lacks the region, the queue URL or the simulator's key: %s", line)
	}

	// The stack's outputs name its parts, as a deployed stack's do.
	stacks, err := cloudformation.NewFromConfig(sdkConfig(env, "AWS_ENDPOINT_URL_CLOUDFORMATION")).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(DefaultStackName)})
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{}
	for _, o := range stacks.Stacks[0].Outputs {
		outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	if outputs[OutputQueueURL] != env[envvars.QueueURL] || outputs[OutputTableName] != env[envvars.TableName] || outputs[OutputBucketName] != DefaultBucket || outputs[OutputJobFeederFunctionName] == "" || outputs[OutputDeadLetterQueueURL] == "" {
		t.Errorf("outputs = %v", outputs)
	}

	// A rule on the results bus, as the smoke check puts one, to a queue
	// of its own.
	sqsc := sqs.NewFromConfig(sdkConfig(env, "AWS_ENDPOINT_URL_SQS"))
	inbox, err := sqsc.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("smoke-events")})
	if err != nil {
		t.Fatal(err)
	}
	rules := eventbridge.NewFromConfig(sdkConfig(env, "AWS_ENDPOINT_URL_EVENTBRIDGE"))
	bus := aws.String(outputs[OutputResultEventsBusName])
	if _, err := rules.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("smoke"), EventBusName: bus, EventPattern: aws.String(`{"source":["geolocate"]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := rules.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("smoke"), EventBusName: bus,
		Targets: []ebtypes.Target{{Id: aws.String("q"), Arn: aws.String("arn:aws:sqs:us-east-1:000000000000:smoke-events")}}}); err != nil {
		t.Fatal(err)
	}

	// An upload through the S3 endpoint is announced on the queue and
	// recorded by the predictor on it.
	s3c := s3.NewFromConfig(sdkConfig(env, "AWS_ENDPOINT_URL_S3"), func(o *s3.Options) { o.UsePathStyle = true })
	put, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(DefaultBucket), Key: aws.String("new/photo.jpg"), Body: bytes.NewReader(jpeg)})
	if err != nil {
		t.Fatal(err)
	}
	db := awspartstest.SharedDynamoDB(t)
	store := ledger.New(db.Client(), env[envvars.TableName])
	deadline := time.Now().Add(time.Minute) // for the record and its event
	var rec *ledger.Record
	for rec == nil || !rec.Final() {
		if time.Now().After(deadline) {
			t.Fatalf("no final record of the upload (last %+v):\n%s", rec, out.String())
		}
		time.Sleep(100 * time.Millisecond)
		recs, err := store.Query(ctx, ledger.QueryInput{Since: time.Now().Add(-time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if recs[i].Key == "new/photo.jpg" && recs[i].VersionID == aws.ToString(put.VersionId) {
				rec = &recs[i]
			}
		}
	}
	if rec.Status != ledger.StatusSucceeded {
		t.Errorf("record = %+v, want succeeded", rec)
	}
	if strings.Contains(out.String(), "notified  s3://"+DefaultBucket+"/a b.jpg") {
		t.Error("an image uploaded before the stack served was announced")
	}

	// Its result event reached the rule's queue.
	var event struct {
		DetailType string `json:"detail-type"`
		Detail     struct{ Key string }
	}
	for event.DetailType == "" {
		got, err := sqsc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: inbox.QueueUrl, WaitTimeSeconds: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) == 0 && time.Now().After(deadline) {
			t.Fatalf("no result event on the results bus:\n%s", out.String())
		}
		if len(got.Messages) > 0 {
			if err := json.Unmarshal([]byte(aws.ToString(got.Messages[0].Body)), &event); err != nil {
				t.Fatal(err)
			}
		}
	}
	if event.DetailType != "Photo Geolocated" || event.Detail.Key != "new/photo.jpg" {
		t.Errorf("result event = %+v", event)
	}

	// The queue's depth reads as SQS's, and the job feeder answers Invoke.
	attrs, err := sqsc.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(outputs[OutputDeadLetterQueueURL]), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "0" {
		t.Errorf("dead-letter queue attributes = %v, %v", attrs, err)
	}
	inv, err := lambda.NewFromConfig(sdkConfig(env, "AWS_ENDPOINT_URL_LAMBDA")).Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(outputs[OutputJobFeederFunctionName])})
	if err != nil || inv.FunctionError != nil || !json.Valid(inv.Payload) {
		t.Errorf("job feeder Invoke = %+v (%s), %v", inv, inv.Payload, err)
	}

	if err := stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	text = out.String()
	for _, want := range []string{"stopped   what ran while served:", "function  " + servedJobFeeder + ": 1 invocation(s) (1 by Invoke, 0 Event), 0 failed",
		"(1 by the S3 front, 0 not announced)", "records   1 in table"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report at the stop lacks %q:\n%s", want, text)
		}
	}
}
