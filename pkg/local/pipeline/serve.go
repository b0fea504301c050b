package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// Serve starts the same local parts as Run (the service, S3 and DynamoDB
// Local with the stack's table), uploads the images WITHOUT announcing them,
// prints the environment that points the functions at these parts, and
// waits for ctx to end. It is for invoking the functions by hand the way
// Lambda would, e.g. `go run ./functions/predictor -event events/sqs-s3-put.json`.
func Serve(ctx context.Context, opts Options) error {
	opts.setDefaults()
	say := func(format string, args ...any) { fmt.Fprintf(opts.Progress, format+"\n", args...) }

	// Inputs first, as in Run. An empty folder is allowed: the events to
	// invoke by hand may name objects uploaded later.
	if err := checkImagesDir(opts.ImagesDir, true); err != nil {
		return err
	}

	svc, err := startService(ctx, opts)
	if err != nil {
		return err
	}
	defer svc.stop()
	aws, err := startLocalAWS(ctx, opts)
	if err != nil {
		return err
	}
	defer aws.close()

	found, err := scanDir(opts.ImagesDir)
	if err != nil {
		return err
	}
	for _, sk := range found.skipped {
		say("skipped   %s (%s)", sk.Path, sk.Reason)
	}
	for _, rel := range found.paths {
		u, err := putFile(ctx, aws.s3.Client(), opts.Bucket, opts.KeyPrefix+rel, localPath(opts.ImagesDir, rel))
		if err != nil {
			return err
		}
		say("uploaded  s3://%s/%s (%d bytes, ETag %s), not yet processed", u.Bucket, u.Key, u.Size, u.ETag)
	}

	env := functionEnv(opts, svc)
	env["AWS_ENDPOINT_URL_S3"] = aws.s3.Endpoint()
	env["AWS_ENDPOINT_URL_DYNAMODB"] = aws.ddb.Endpoint()
	env["AWS_REGION"] = awsparts.Region
	env["AWS_ACCESS_KEY_ID"] = RigAccessKeyID
	env["AWS_SECRET_ACCESS_KEY"] = RigAccessKeyID
	if svc.sim == nil {
		// The real key is never printed: the user's shell already has it.
		env[envvars.APIKey] = "$" + envvars.APIKey
	}
	say("serving   %s, %s bucket at S3 %s, DynamoDB Local at %s (Ctrl-C to stop)", svc.describe(), bucketMode(opts), aws.s3.Endpoint(), aws.ddb.Endpoint())
	say("\nIn another shell, point the functions at these parts and invoke them as Lambda would:\n")
	say("%s", exportLine(env))
	say("go run ./functions/predictor -event events/sqs-s3-put.json   # then again: the redelivery is a no-op")
	say("go run ./functions/monitor -event events/scheduled.json")
	<-ctx.Done()
	return nil
}

// RigAccessKeyID is the fake AWS access key id of Serve's export line: a
// shell that holds it holds the local rig's environment, which the CLI's
// AWS commands recognise and say (through envvars, as they never import
// the rig).
const RigAccessKeyID = envvars.LocalRigAccessKeyID

// exportLine renders env as one shell export command, in name order.
func exportLine(env map[string]string) string {
	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, name+"="+env[name])
	}
	return "export " + strings.Join(parts, " ")
}
