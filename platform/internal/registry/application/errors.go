package application

import (
	"errors"
	"strconv"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"cozystack.io/platform/internal/apiserver/appkinds"
)

// mapError rewrites an error about the HelmRelease of application name
// (name may be empty for lists) into the same error about the application:
// status details, message and causes name the application resource and
// name, so NotFound, AlreadyExists, Conflict and Invalid read as they would
// for any Kubernetes resource. Errors about other resources (a missing
// namespace) and errors without a status pass through.
func (r *REST) mapError(err error, name string) error {
	var apiStatus apierrors.APIStatus
	if err == nil || !errors.As(err, &apiStatus) {
		return err
	}
	status := apiStatus.Status()
	st := status.DeepCopy()
	st.Message = r.rewrite(st.Message, name)
	if d := st.Details; d != nil && d.Group == helmv2.GroupVersion.Group {
		d.Group = appkinds.Group
		switch d.Kind {
		case "helmreleases":
			d.Kind = r.kind.Plural
		case helmv2.HelmReleaseKind:
			d.Kind = r.kind.Kind
		}
		if name != "" && d.Name == r.kind.HelmReleaseName(name) {
			d.Name = name
		}
		for i := range d.Causes {
			d.Causes[i].Message = r.rewrite(d.Causes[i].Message, name)
		}
	}
	return &apierrors.StatusError{ErrStatus: *st}
}

func (r *REST) rewrite(msg, name string) string {
	pairs := []string{
		"helmreleases." + helmv2.GroupVersion.Group, r.groupResource().String(),
		helmv2.HelmReleaseKind + "." + helmv2.GroupVersion.Group, r.kind.Kind + "." + appkinds.Group,
	}
	if name != "" {
		pairs = append(pairs, strconv.Quote(r.kind.HelmReleaseName(name)), strconv.Quote(name))
	}
	return strings.NewReplacer(pairs...).Replace(msg)
}
