package awsapi

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
)

func TestCloudFormationDescribesAddedStacksThroughTheSDKClient(t *testing.T) {
	ctx := context.Background()
	c := NewCloudFormation()
	c.AddStack("Geolocation", map[string]string{"QueueUrl": "http://127.0.0.1:1/000000000000/q", "TableName": "t & <u>"},
		[]StackResource{{LogicalID: "AlarmTopicD01E77F9", PhysicalID: "arn:aws:sns:us-east-1:000000000000:alarms", Type: "AWS::SNS::Topic"}})
	cfg, _ := serve(t, c)
	client := cloudformation.NewFromConfig(cfg)

	out, err := client.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String("Geolocation")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Stacks) != 1 || out.Stacks[0].StackStatus != "CREATE_COMPLETE" || out.Stacks[0].CreationTime == nil {
		t.Fatalf("stacks = %+v", out.Stacks)
	}
	got := map[string]string{}
	for _, o := range out.Stacks[0].Outputs {
		got[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	if len(got) != 2 || got["TableName"] != "t & <u>" || got["QueueUrl"] != "http://127.0.0.1:1/000000000000/q" {
		t.Errorf("outputs = %v", got)
	}
	_, err = client.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String("Other")})
	if err == nil || !strings.Contains(err.Error(), "ValidationError") || !strings.Contains(err.Error(), "Stack with id Other does not exist") {
		t.Errorf("DescribeStacks of a missing stack: %v, want CloudFormation's ValidationError", err)
	}
	res, err := client.ListStackResources(ctx, &cloudformation.ListStackResourcesInput{StackName: aws.String("Geolocation")})
	if err != nil || len(res.StackResourceSummaries) != 1 || aws.ToString(res.StackResourceSummaries[0].ResourceType) != "AWS::SNS::Topic" {
		t.Fatalf("ListStackResources = %+v, %v", res, err)
	}
}
