package awsapi

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

func TestLambdaInvokesRegisteredFunctionsThroughTheSDKClient(t *testing.T) {
	ctx := context.Background()
	l := NewLambda()
	defer l.Close()
	ran := make(chan string, 1)
	l.Register(Function{Name: "echo", Timeout: time.Minute, Environment: map[string]string{"GEO_MODEL_ID": "m1"},
		Handler: func(_ context.Context, payload []byte) ([]byte, error) {
			if string(payload) == `{"fail":true}` {
				return nil, errors.New("asked to fail")
			}
			select {
			case ran <- string(payload):
			default:
			}
			return payload, nil
		}})
	l.AddEventSourceMapping(EventSourceMapping{Function: "echo", EventSourceArn: "arn:aws:sqs:us-east-1:000000000000:uploads", BatchSize: 10})
	cfg, _ := serve(t, l)
	client := lambda.NewFromConfig(cfg)

	out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("echo"), Payload: []byte(`{"a":1}`)})
	if err != nil || string(out.Payload) != `{"a":1}` || out.FunctionError != nil || out.StatusCode != 200 {
		t.Fatalf("sync Invoke = %+v, %v", out, err)
	}
	<-ran
	out, err = client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(l.FunctionARN("echo")), Payload: []byte(`{"fail":true}`)})
	if err != nil || aws.ToString(out.FunctionError) != "Unhandled" {
		t.Fatalf("failing Invoke = %+v, %v; want FunctionError Unhandled", out, err)
	}
	out, err = client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("echo"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{"b":2}`)})
	if err != nil || out.StatusCode != 202 {
		t.Fatalf("Event Invoke = %+v, %v; want 202", out, err)
	}
	select {
	case got := <-ran:
		if got != `{"b":2}` {
			t.Errorf("Event invocation ran on %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Event invocation never ran")
	}
	l.Close() // waits for it to be counted
	if c := l.Invocations()["echo"]; c != (InvocationCounts{Sync: 2, Async: 1, Errors: 1}) {
		t.Errorf("counts = %+v, want 2 sync (1 failed) and 1 async", c)
	}

	var missing *types.ResourceNotFoundException
	if _, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("nope")}); !errors.As(err, &missing) {
		t.Errorf("Invoke of an unknown function: %v, want ResourceNotFoundException", err)
	}

	conf, err := client.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String("echo")})
	if err != nil || conf.Environment.Variables["GEO_MODEL_ID"] != "m1" || aws.ToInt32(conf.Timeout) != 60 {
		t.Fatalf("GetFunctionConfiguration = %+v, %v", conf, err)
	}
	maps, err := client.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{EventSourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:uploads")})
	if err != nil || len(maps.EventSourceMappings) != 1 || aws.ToString(maps.EventSourceMappings[0].FunctionArn) != l.FunctionARN("echo") {
		t.Fatalf("ListEventSourceMappings = %+v, %v", maps, err)
	}
	if maps, err := client.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{EventSourceArn: aws.String("arn:other")}); err != nil || len(maps.EventSourceMappings) != 0 {
		t.Errorf("mappings of another source = %+v, %v", maps, err)
	}
}
