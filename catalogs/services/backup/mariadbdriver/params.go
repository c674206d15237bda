package mariadbdriver

import (
	"fmt"
	"path"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"cozystack.io/sdk/backup/driver"
)

// DefaultWaitTimeout bounds the operator's waiting states (ClassifyComplete)
// when the parameters set no waitTimeout.
const DefaultWaitTimeout = 10 * time.Minute

// Parameters are the strategy parameters of a BackupClass for the MariaDB
// driver, decoded strictly: exactly one of S3 and PersistentVolumeClaim.
type Parameters struct {
	// S3 stores the backups in an S3-compatible bucket.
	S3 *S3 `json:"s3,omitempty"`
	// PersistentVolumeClaim stores each backup in a PVC the operator
	// creates for the Backup (and deletes with it).
	PersistentVolumeClaim *PVC `json:"persistentVolumeClaim,omitempty"`
	// Compression of the dump: none, bzip2 or gzip (the operator's
	// default when empty).
	Compression string `json:"compression,omitempty"`
	// MaxRetention is the operator's own cleanup of old files in the
	// Backup's storage (a Go duration, e.g. "720h"); each run writes
	// under a prefix of its own, so it removes nothing of another run.
	MaxRetention string `json:"maxRetention,omitempty"`
	// WaitTimeout bounds the operator's waiting states (no Complete
	// condition yet, a suspended Job, an error it retries) before the run
	// fails BackendFailed; a Go duration, default 10m.
	WaitTimeout string `json:"waitTimeout,omitempty"`
}

// S3 is the bucket of the backups.
type S3 struct {
	// Bucket and Endpoint (host[:port], no scheme) are required.
	Bucket   string `json:"bucket"`
	Endpoint string `json:"endpoint"`
	// Region of the bucket, optional.
	Region string `json:"region,omitempty"`
	// Prefix is a template (text/template, missingkey=error) over
	// {Namespace, Application, Job}; the run's objects go under
	// "<prefix>/<namespace>/<Backup name>".
	Prefix string `json:"prefix,omitempty"`
	// CredentialsSecret is a Secret in the driver's namespace holding
	// the keys access-key-id and secret-access-key; it is projected into
	// the application's namespace. Required.
	CredentialsSecret string `json:"credentialsSecret"`
	// TLS enables TLS to the endpoint.
	TLS bool `json:"tls,omitempty"`
}

// Keys of the credentials Secret.
const (
	AccessKeyIDKey     = "access-key-id"
	SecretAccessKeyKey = "secret-access-key"
)

// PVC is a PersistentVolumeClaim per backup.
type PVC struct {
	// Size of the claim, e.g. 10Gi. Required.
	Size string `json:"size"`
	// StorageClassName of the claim; empty means the cluster's default.
	StorageClassName string `json:"storageClassName,omitempty"`
}

// parse decodes and checks p; every error is a *driver.ParameterError or
// a *driver.TemplateError.
func parse(raw *Parameters, decode func(any) error) (time.Duration, error) {
	if err := decode(raw); err != nil {
		return 0, err
	}
	invalid := func(field, format string, args ...any) error {
		return &driver.ParameterError{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case raw.S3 == nil && raw.PersistentVolumeClaim == nil:
		return 0, invalid("s3", "set one storage target: s3 or persistentVolumeClaim")
	case raw.S3 != nil && raw.PersistentVolumeClaim != nil:
		return 0, invalid("persistentVolumeClaim", "set one storage target, not both s3 and persistentVolumeClaim")
	}
	if s := raw.S3; s != nil {
		if s.Bucket == "" || s.Endpoint == "" {
			return 0, invalid("s3.bucket", "s3.bucket and s3.endpoint are required")
		}
		if errs := validation.IsDNS1123Subdomain(s.CredentialsSecret); len(errs) > 0 {
			return 0, invalid("s3.credentialsSecret", "a Secret name in the driver's namespace is required: %v", errs)
		}
		if _, err := driver.Parse("s3.prefix", s.Prefix); err != nil {
			return 0, err
		}
	}
	if p := raw.PersistentVolumeClaim; p != nil {
		if _, err := resource.ParseQuantity(p.Size); err != nil {
			return 0, invalid("persistentVolumeClaim.size", "a quantity such as 10Gi is required: %v", err)
		}
	}
	switch raw.Compression {
	case "", "none", "bzip2", "gzip":
	default:
		return 0, invalid("compression", "%q is not one of none, bzip2, gzip", raw.Compression)
	}
	if raw.MaxRetention != "" {
		if _, err := time.ParseDuration(raw.MaxRetention); err != nil {
			return 0, invalid("maxRetention", "not a duration: %v", err)
		}
	}
	wait := DefaultWaitTimeout
	if raw.WaitTimeout != "" {
		d, err := time.ParseDuration(raw.WaitTimeout)
		if err != nil || d <= 0 {
			return 0, invalid("waitTimeout", "%q is not a positive duration", raw.WaitTimeout)
		}
		wait = d
	}
	return wait, nil
}

// storage renders the spec.storage of a k8s.mariadb.com Backup named
// name in namespace ns, whose S3 credentials are in the Secret secret.
func storage(p *Parameters, ns, app, job, name, secret string) (map[string]any, error) {
	if c := p.PersistentVolumeClaim; c != nil {
		pvc := map[string]any{
			"accessModes": []any{"ReadWriteOnce"},
			"resources":   map[string]any{"requests": map[string]any{"storage": c.Size}},
		}
		if c.StorageClassName != "" {
			pvc["storageClassName"] = c.StorageClassName
		}
		return map[string]any{"persistentVolumeClaim": pvc}, nil
	}
	s := p.S3
	prefix, err := driver.Render("s3.prefix", s.Prefix, map[string]any{"Namespace": ns, "Application": app, "Job": job})
	if err != nil {
		return nil, err
	}
	s3 := map[string]any{
		"bucket":                      s.Bucket,
		"endpoint":                    s.Endpoint,
		"prefix":                      path.Join(prefix, ns, name),
		"accessKeyIdSecretKeyRef":     map[string]any{"name": secret, "key": AccessKeyIDKey},
		"secretAccessKeySecretKeyRef": map[string]any{"name": secret, "key": SecretAccessKeyKey},
	}
	if s.Region != "" {
		s3["region"] = s.Region
	}
	if s.TLS {
		s3["tls"] = map[string]any{"enabled": true}
	}
	return map[string]any{"s3": s3}, nil
}
