package awsapi

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// StackResource is one resource ListStackResources reports.
type StackResource struct {
	LogicalID, PhysicalID, Type string
}

// CloudFormation serves DescribeStacks (a stack's outputs, how the CLI
// finds the pipeline's resources with --stack) and ListStackResources of
// the stacks added, over awsQuery.
type CloudFormation struct {
	mu     sync.Mutex
	stacks map[string]*stack
}

type stack struct {
	name, id  string
	created   time.Time
	outputs   map[string]string
	resources []StackResource
}

// NewCloudFormation returns a CloudFormation stand-in with no stacks.
func NewCloudFormation() *CloudFormation {
	return &CloudFormation{stacks: map[string]*stack{}}
}

// AddStack adds (or replaces) a stack in CREATE_COMPLETE with these
// outputs and resources.
func (c *CloudFormation) AddStack(name string, outputs map[string]string, resources []StackResource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stacks[name] = &stack{
		name:      name,
		id:        "arn:aws:cloudformation:" + sqsqueue.DefaultRegion + ":" + sqsqueue.DefaultAccountID + ":stack/" + name + "/" + uuid.NewString(),
		created:   time.Now().UTC(),
		outputs:   outputs,
		resources: resources,
	}
}

// Handler is the HTTP handler of the CloudFormation API.
func (c *CloudFormation) Handler() http.Handler {
	return awsQuery{namespace: "http://cloudformation.amazonaws.com/doc/2010-05-15/", ops: map[string]queryOp{
		"DescribeStacks":     c.describeStacks,
		"ListStackResources": c.listStackResources,
	}}
}

// lookup finds a stack by name or id, answering CloudFormation's own
// ValidationError for one that does not exist.
func (c *CloudFormation) lookup(ref string) (*stack, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.stacks {
		if s.name == ref || s.id == ref {
			return s, nil
		}
	}
	return nil, senderError("ValidationError", "Stack with id %s does not exist", ref)
}

type stackOutput struct {
	OutputKey, OutputValue string
}

type stackDescription struct {
	StackName    string
	StackId      string
	StackStatus  string
	CreationTime string
	Outputs      member[stackOutput]
}

type describeStacksResult struct {
	Stacks member[stackDescription]
}

func (c *CloudFormation) describeStacks(_ context.Context, form url.Values) (any, error) {
	var found []*stack
	if ref := form.Get("StackName"); ref != "" {
		s, err := c.lookup(ref)
		if err != nil {
			return nil, err
		}
		found = append(found, s)
	} else {
		c.mu.Lock()
		for _, s := range c.stacks {
			found = append(found, s)
		}
		c.mu.Unlock()
		sort.Slice(found, func(i, j int) bool { return found[i].name < found[j].name })
	}
	res := &describeStacksResult{}
	for _, s := range found {
		d := stackDescription{StackName: s.name, StackId: s.id, StackStatus: "CREATE_COMPLETE", CreationTime: s.created.Format(time.RFC3339)}
		keys := make([]string, 0, len(s.outputs))
		for k := range s.outputs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			d.Outputs.Members = append(d.Outputs.Members, stackOutput{OutputKey: k, OutputValue: s.outputs[k]})
		}
		res.Stacks.Members = append(res.Stacks.Members, d)
	}
	return res, nil
}

type resourceSummary struct {
	LogicalResourceId    string
	PhysicalResourceId   string
	ResourceType         string
	ResourceStatus       string
	LastUpdatedTimestamp string
}

type listStackResourcesResult struct {
	StackResourceSummaries member[resourceSummary]
}

func (c *CloudFormation) listStackResources(_ context.Context, form url.Values) (any, error) {
	s, err := c.lookup(form.Get("StackName"))
	if err != nil {
		return nil, err
	}
	res := &listStackResourcesResult{}
	for _, r := range s.resources {
		res.StackResourceSummaries.Members = append(res.StackResourceSummaries.Members, resourceSummary{
			LogicalResourceId: r.LogicalID, PhysicalResourceId: r.PhysicalID, ResourceType: r.Type,
			ResourceStatus: "CREATE_COMPLETE", LastUpdatedTimestamp: s.created.Format(time.RFC3339),
		})
	}
	return res, nil
}
