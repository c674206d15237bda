package binder

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/drivers"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// outcome is the binder's verdict on one unbound job: a DriverBound
// reason (one of backupsv1alpha1.BinderReasons) and its message.
type outcome struct {
	reason  string
	message string
	// failed: the core fails the job (UnknownStrategyKind,
	// DriverWaitTimeout).
	failed bool
	// binding and snapshot are set with reason Bound.
	binding  *backupsv1alpha1.Binding
	snapshot *backupsv1alpha1.SnapshotRef
	// deadline is when a waiting job fails with DriverWaitTimeout.
	deadline time.Time
}

// waitingFor reports whether o keeps the job Pending, waiting.
func (o outcome) waitingFor() bool { return !o.failed && o.reason != backupsv1alpha1.ReasonBound }

// decide computes the outcome for the unbound job at now, reading the
// class, the application and the registrations. Errors are the reads'.
func (r *reconciler) decide(ctx context.Context, job *backupsv1alpha1.BackupJob, now time.Time) (outcome, error) {
	wait := (&backupsv1alpha1.BackupClass{}).Timeouts().DriverWait.Duration
	class, strategy, o, err := r.class(ctx, job)
	if err != nil {
		return outcome{}, err
	}
	if class != nil {
		wait = class.Timeouts().DriverWait.Duration
	}
	if o.reason == "" {
		var release *helmv2.HelmRelease
		if release, o, err = r.application(ctx, job); err != nil {
			return outcome{}, err
		}
		if o.reason == "" {
			res, err := r.resolver.Resolve(ctx, strategy.Kind, now)
			if err == nil && res.Terminal {
				// Failing is final: confirm on the API server that no
				// registration the cache has not seen yet serves the kind.
				live := drivers.Resolver{Reader: r.live, Handoff: r.resolver.Handoff, Protocols: r.resolver.Protocols, BuiltIn: r.resolver.BuiltIn}
				res, err = live.Resolve(ctx, strategy.Kind, now)
			}
			if err != nil {
				return outcome{}, fmt.Errorf("resolve strategy kind %s: %w", strategy.Kind, err)
			}
			o = outcome{reason: res.Reason, message: res.Message, failed: res.Terminal}
			if res.Reason == backupsv1alpha1.ReasonBound {
				// Stored only once a driver is bound: a waiting job
				// stores nothing.
				ref, fail, err := r.store(ctx, job, release)
				if err != nil {
					return outcome{}, err
				}
				if fail != nil {
					return *fail, nil
				}
				o.snapshot = ref
				o.binding = &backupsv1alpha1.Binding{
					DriverRef:       backupsv1alpha1.DriverRef{Name: res.Driver.Name, ProtocolVersion: res.ProtocolVersion},
					Strategy:        *strategy.DeepCopy(),
					BackupClassName: class.Name,
					Timeouts:        class.Timeouts(),
					BoundTime:       metav1.NewTime(now.UTC().Truncate(time.Second)),
				}
			}
		}
	}
	if !o.waitingFor() {
		return o, nil
	}
	o.deadline = job.CreationTimestamp.Add(wait)
	if now.Before(o.deadline) {
		return o, nil
	}
	return outcome{reason: backupsv1alpha1.ReasonDriverWaitTimeout, failed: true, message: fmt.Sprintf(
		"no driver was bound within the driverWaitTimeout of %s since the job was created at %s; it last waited with %s: %s. Fix that cause, then create a new job",
		wait, job.CreationTimestamp.UTC().Format(time.RFC3339), o.reason, o.message)}, nil
}

// class returns the job's BackupClass and its strategy for the job's
// application kind, or (with a nil class when it is missing) the
// ClassNotFound outcome.
func (r *reconciler) class(ctx context.Context, job *backupsv1alpha1.BackupJob) (*backupsv1alpha1.BackupClass, backupsv1alpha1.Strategy, outcome, error) {
	name := job.Spec.BackupClassName
	class := &backupsv1alpha1.BackupClass{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: name}, class); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, backupsv1alpha1.Strategy{}, outcome{reason: backupsv1alpha1.ReasonClassNotFound, message: fmt.Sprintf(
				"BackupClass %s does not exist: create it, or create a job naming an existing class in spec.backupClassName", name)}, nil
		}
		return nil, backupsv1alpha1.Strategy{}, outcome{}, fmt.Errorf("get BackupClass %s: %w", name, err)
	}
	kind := job.Spec.ApplicationRef.ApplicationKind
	strategy, ok := class.StrategyFor(kind)
	if !ok {
		var kinds []string
		for _, s := range class.Spec.Strategies {
			kinds = append(kinds, s.Kind+"."+s.APIGroup)
		}
		slices.Sort(kinds)
		return class, strategy, outcome{reason: backupsv1alpha1.ReasonClassNotFound, message: fmt.Sprintf(
			"BackupClass %s has no strategy for %s.%s (it has strategies for %s): add one to its spec.strategies, or use another class",
			name, kind.Kind, kind.APIGroup, strings.Join(kinds, ", "))}, nil
	}
	return class, strategy, outcome{}, nil
}

// application returns the HelmRelease of the job's application (its
// spec.values are the application's spec), or the ApplicationNotFound
// outcome.
func (r *reconciler) application(ctx context.Context, job *backupsv1alpha1.BackupJob) (*helmv2.HelmRelease, outcome, error) {
	a := job.Spec.ApplicationRef
	sel := client.MatchingLabels{
		v1alpha1.LabelApplicationGroup: a.APIGroup,
		v1alpha1.LabelApplicationKind:  a.Kind,
		v1alpha1.LabelApplicationName:  a.Name,
	}
	var list helmv2.HelmReleaseList
	if err := r.client.List(ctx, &list, client.InNamespace(job.Namespace), sel); err != nil {
		return nil, outcome{}, fmt.Errorf("list the HelmReleases of application %s %s: %w", a.Kind, a.Name, err)
	}
	switch len(list.Items) {
	case 0:
		return nil, outcome{reason: backupsv1alpha1.ReasonApplicationNotFound, message: fmt.Sprintf(
			"application %s %s (%s) does not exist in namespace %s (no HelmRelease there is labelled %s=%s, %s=%s, %s=%s): create the application, or fix spec.applicationRef in a new job",
			a.Kind, a.Name, a.APIGroup, job.Namespace,
			v1alpha1.LabelApplicationGroup, a.APIGroup, v1alpha1.LabelApplicationKind, a.Kind, v1alpha1.LabelApplicationName, a.Name)}, nil
	case 1:
	default:
		names := make([]string, len(list.Items))
		for i := range list.Items {
			names[i] = list.Items[i].Name
		}
		slices.Sort(names)
		return nil, outcome{reason: backupsv1alpha1.ReasonApplicationNotFound, message: fmt.Sprintf(
			"application %s %s (%s) is ambiguous in namespace %s: the HelmReleases %s all carry its labels; remove the labels from the ones that are not the application's",
			a.Kind, a.Name, a.APIGroup, job.Namespace, strings.Join(names, ", "))}, nil
	}
	return &list.Items[0], outcome{}, nil
}
