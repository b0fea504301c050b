package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
)

// localAWS holds the local stand-ins of the AWS services.
type localAWS struct {
	s3      *awsparts.S3
	ddb     *awsparts.DynamoDB
	ownsDDB bool
}

// startLocalAWS starts S3 and (unless given) DynamoDB Local, then creates
// the bucket (versioned, as in the stack, unless opts.Unversioned) and the
// table (tableschema, the stack's own definition).
func startLocalAWS(ctx context.Context, opts Options) (_ *localAWS, err error) {
	l := &localAWS{ddb: opts.DynamoDB}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	if l.s3, err = awsparts.StartS3(); err != nil {
		return nil, err
	}
	createBucket := l.s3.CreateVersionedBucket
	if opts.Unversioned {
		createBucket = l.s3.CreateBucket
	}
	if err := createBucket(ctx, opts.Bucket); err != nil {
		return nil, err
	}
	if l.ddb == nil {
		if l.ddb, err = awsparts.StartDynamoDB(ctx); err != nil {
			return nil, err
		}
		l.ownsDDB = true
	}
	if err := l.ddb.CreateTable(ctx, opts.Table); err != nil {
		return nil, err
	}
	return l, nil
}

// close stops what startLocalAWS started. DynamoDB Local is killed with its
// whole process group, so no JVM outlives the run.
func (l *localAWS) close() error {
	var errs []error
	if l.s3 != nil {
		if err := l.s3.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if l.ownsDDB && l.ddb != nil {
		l.ddb.Stop()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop local AWS: %w", err)
	}
	return nil
}

// bucketMode names the bucket's versioning for progress lines.
func bucketMode(opts Options) string {
	if opts.Unversioned {
		return "unversioned"
	}
	return "versioned"
}
