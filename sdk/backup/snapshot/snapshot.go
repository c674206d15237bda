package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

const (
	// DataKey is the key of the snapshot ConfigMap's data holding the
	// canonical values.
	DataKey = "values.json"
	// MaxBytes is the most bytes of canonical values a snapshot holds:
	// a ConfigMap's data (keys included) is at most 1 MiB (1,048,576
	// bytes, the API server's limit).
	MaxBytes = 1<<20 - len(DataKey)

	// LabelSnapshot marks the core's snapshot objects: "values" on the
	// ConfigMap holding the values, "owners" on the small ConfigMap whose
	// ownerReferences are the jobs and Backups using it (OwnersName).
	LabelSnapshot = "backups.cozystack.io/snapshot"
	// LabelApplication on both names the application (its name) the
	// snapshot was first taken of.
	LabelApplication = "backups.cozystack.io/application"
	// AnnotationDigest on both is the SnapshotRef digest.
	AnnotationDigest = "backups.cozystack.io/digest"

	// LabelValues and LabelOwners are the values of LabelSnapshot.
	LabelValues = "values"
	LabelOwners = "owners"

	digestPrefix = "sha256:"
)

// Canonical returns values (a JSON object; empty input is {}) in canonical
// form (object keys sorted, no insignificant space) and its digest
// ("sha256:<hex>"). An error says the input is no JSON object.
func Canonical(values []byte) ([]byte, string, error) {
	if len(bytes.TrimSpace(values)) == 0 {
		values = []byte("{}")
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(values))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, "", fmt.Errorf("the application's values are not a JSON object: %w", err)
	}
	if v == nil {
		v = map[string]any{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, "", err
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return out, Digest(out), nil
}

// Digest is "sha256:" and the lowercase hex sha256 of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return digestPrefix + hex.EncodeToString(sum[:])
}

// Name is the name of the ConfigMap holding the values of digest for the
// application app: "snapshot-<app>-<first 12 hex digits>", shortened so
// it stays a valid object name with OwnersName's suffix.
func Name(app, digest string) string {
	h := strings.TrimPrefix(digest, digestPrefix)
	if len(h) > 12 {
		h = h[:12]
	}
	const max = 253 - len("-owners") - len("snapshot--") - 12
	if len(app) > max {
		app = strings.TrimRight(app[:max], "-.")
	}
	return "snapshot-" + app + "-" + h
}

// OwnersName is the name of the small ConfigMap (no data) beside the
// snapshot name whose ownerReferences are the jobs and Backups using the
// snapshot; it owns the values ConfigMap, so the garbage collector
// removes both after the last of them, and adding an owner never
// rewrites the values.
func OwnersName(name string) string { return name + "-owners" }

// IntegrityError is a snapshot ConfigMap whose values do not match the
// reference: it was changed after the core wrote it (tampering), or it is
// not the core's.
type IntegrityError struct {
	// Namespace and Name are the ConfigMap's.
	Namespace, Name string
	// Want is the reference's digest, Got the digest of the ConfigMap's
	// values ("" when it holds no values).
	Want, Got string
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("application snapshot ConfigMap %s/%s does not match its reference: the reference's digest is %s, the ConfigMap's values have digest %s; it was changed after the backup core wrote it (tampering): restore from another Backup (contract k7, Snapshots)",
		e.Namespace, e.Name, e.Want, orNone(e.Got))
}

func orNone(s string) string {
	if s == "" {
		return "(none: no " + DataKey + " key)"
	}
	return s
}

// Values returns the values a snapshot ConfigMap holds, verified against
// digest; an *IntegrityError when they do not match.
func Values(cm *corev1.ConfigMap, digest string) ([]byte, error) {
	data, ok := cm.Data[DataKey]
	got := ""
	if ok {
		got = Digest([]byte(data))
	}
	if got != digest {
		return nil, &IntegrityError{Namespace: cm.Namespace, Name: cm.Name, Want: digest, Got: got}
	}
	return []byte(data), nil
}

// Resolve returns the application snapshot of an object in namespace: the
// values of ref, read with c (read live: a cached client would cache every
// ConfigMap) and verified, or else inline (written by an earlier
// release), or else nil. Errors: an *IntegrityError, the ConfigMap's
// absence (apierrors.IsNotFound, the message naming it) or the read's.
func Resolve(ctx context.Context, c client.Reader, namespace string, ref *v1alpha1.SnapshotRef, inline *v1alpha1.RawSpec) (*v1alpha1.RawSpec, error) {
	if ref == nil {
		if inline == nil || len(inline.Raw) == 0 {
			return nil, nil
		}
		return inline.DeepCopy(), nil
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.ConfigMapName}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &notFound{err: err, msg: fmt.Sprintf("application snapshot ConfigMap %s/%s (digest %s) does not exist: it was deleted; restore from another Backup", namespace, ref.ConfigMapName, ref.Digest)}
		}
		return nil, fmt.Errorf("read application snapshot ConfigMap %s/%s: %w", namespace, ref.ConfigMapName, err)
	}
	raw, err := Values(cm, ref.Digest)
	if err != nil {
		return nil, err
	}
	return &v1alpha1.RawSpec{Raw: raw}, nil
}

// notFound keeps apierrors.IsNotFound true with a clearer message.
type notFound struct {
	err error
	msg string
}

func (e *notFound) Error() string { return e.msg }
func (e *notFound) Unwrap() error { return e.err }

// ForJob resolves a BackupJob's snapshot (status.applicationSnapshotRef,
// else the deprecated status.applicationSnapshot).
func ForJob(ctx context.Context, c client.Reader, job *v1alpha1.BackupJob) (*v1alpha1.RawSpec, error) {
	return Resolve(ctx, c, job.Namespace, job.Status.ApplicationSnapshotRef, job.Status.ApplicationSnapshot)
}

// ForBackup resolves a Backup's snapshot (spec.applicationSnapshotRef,
// else the deprecated spec.applicationSnapshot).
func ForBackup(ctx context.Context, c client.Reader, b *v1alpha1.Backup) (*v1alpha1.RawSpec, error) {
	return Resolve(ctx, c, b.Namespace, b.Spec.ApplicationSnapshotRef, b.Spec.ApplicationSnapshot)
}

// HasSnapshot reports whether b carries a snapshot (a reference or the
// deprecated inline values).
func HasSnapshot(b *v1alpha1.Backup) bool {
	return b.Spec.ApplicationSnapshotRef != nil || (b.Spec.ApplicationSnapshot != nil && len(b.Spec.ApplicationSnapshot.Raw) > 0)
}
