package waldursim

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

func splitName(full string) (first, last string) {
	first, last, _ = strings.Cut(strings.TrimSpace(full), " ")
	return first, last
}

func (st *state) renderMe(c *call, staff bool) map[string]any {
	u := st.me.User
	first, last := splitName(u.FullName)
	perms := make([]any, 0, len(st.me.Permissions))
	for _, p := range st.me.Permissions {
		perms = append(perms, st.renderPermission(p))
	}
	return map[string]any{
		"url": c.url("users/" + u.UUID + "/"), "uuid": u.UUID, "username": u.Username,
		"slug": slugify(u.Username), "full_name": u.FullName, "first_name": first, "last_name": last,
		"email": u.Email, "is_staff": staff, "is_active": true, "is_support": false,
		"date_joined": ts(time.Unix(0, 0)), "registration_method": "default",
		"preferred_language": "", "notifications_enabled": true, "permissions": perms,
		"civil_number": nil, "token_lifetime": nil, "token_expires_at": nil, "agreement_date": nil,
		"requested_email": nil, "birth_date": nil, "image": nil, "ip_address": nil, "gender": nil,
		"native_name": "", "job_title": "", "phone_number": "", "organization": "", "description": "",
		"token": "", "affiliations": []any{}, "identity_provider_name": "", "identity_provider_label": "",
		"identity_provider_management_url": "", "identity_provider_fields": []any{}, "identity_source": "",
		"has_active_session": false, "personal_title": "", "place_of_birth": "", "country_of_residence": "",
		"nationality": "", "nationalities": []any{}, "organization_country": "", "organization_type": "",
		"organization_registry_code": "", "eduperson_assurance": []any{}, "is_identity_manager": false,
		"attribute_sources": map[string]any{}, "managed_isds": []any{}, "active_isds": []any{},
	}
}

func (st *state) renderPermission(p Permission) map[string]any {
	u := st.me.User
	m := map[string]any{
		"user_uuid": u.UUID, "user_name": u.FullName, "user_slug": slugify(u.Username),
		"created": ts(time.Unix(0, 0)), "expiration_time": nil,
		"created_by_full_name": "", "created_by_username": "",
		"role_name": p.RoleName, "role_description": "", "role_uuid": derivedUUID(u.UUID, len(p.RoleName)),
		"scope_type": p.ScopeType, "scope_uuid": p.ScopeUUID, "scope_name": p.ScopeName,
	}
	var customerUUID string
	switch p.ScopeType {
	case "customer":
		customerUUID = p.ScopeUUID
	case "offering":
		if o, ok := st.offerings.get(p.ScopeUUID); ok {
			customerUUID = o.CustomerUUID
		}
	case "project":
		if pr, ok := st.projects.get(p.ScopeUUID); ok {
			customerUUID = pr.CustomerUUID
		}
	}
	if c, ok := st.customers.get(customerUUID); ok {
		m["customer_uuid"], m["customer_name"] = c.UUID, c.Name
	}
	return m
}

func (st *state) renderProject(c *call, p *Project) map[string]any {
	cust, _ := st.customers.get(p.CustomerUUID)
	if cust == nil {
		cust = &Customer{}
	}
	count := 0
	for _, r := range st.resources.all() {
		if r.ProjectUUID == p.UUID && r.State != ResourceTerminated {
			count++
		}
	}
	return map[string]any{
		"url": c.url("projects/" + p.UUID + "/"), "uuid": p.UUID, "name": p.Name, "slug": p.Slug,
		"customer": c.url("customers/" + cust.UUID + "/"), "customer_uuid": cust.UUID,
		"customer_name": cust.Name, "customer_slug": cust.Slug, "customer_native_name": "",
		"customer_abbreviation": "", "description": p.Description,
		"customer_display_billing_info_in_projects": false, "created": ts(time.Unix(0, 0)),
		"type": nil, "type_name": nil, "type_uuid": nil, "backend_id": "",
		"start_date": nil, "end_date": orNull(p.EndDate), "end_date_requested_by": nil,
		"oecd_fos_2007_code": nil, "oecd_fos_2007_label": "", "is_industry": false, "image": nil,
		"resources_count": count, "max_service_accounts": nil, "kind": "default", "is_removed": false,
		"termination_metadata": nil, "staff_notes": "", "grace_period_days": nil,
		"project_credit": nil, "marketplace_resource_count": map[string]any{},
		"user_email_patterns": []any{}, "user_affiliations": []any{}, "user_identity_sources": []any{},
		"billing_price_estimate": map[string]any{"total": "0.00", "current": "0.00", "tax": "0.00", "tax_current": "0.00"},
	}
}

func (st *state) renderOfferingUser(c *call, ou *OfferingUser) map[string]any {
	u, _ := st.users.get(ou.UserUUID)
	if u == nil {
		u = &User{UUID: ou.UserUUID}
	}
	o, _ := st.offerings.get(ou.OfferingUUID)
	if o == nil {
		o = &Offering{UUID: ou.OfferingUUID}
	}
	cust, _ := st.customers.get(o.CustomerUUID)
	if cust == nil {
		cust = &Customer{}
	}
	first, last := splitName(u.FullName)
	return map[string]any{
		"url": c.url("marketplace-offering-users/" + ou.UUID + "/"), "uuid": ou.UUID,
		"user": c.url("users/" + u.UUID + "/"), "offering": c.url("marketplace-provider-offerings/" + o.UUID + "/"),
		"username": orNull(ou.Username), "offering_uuid": o.UUID, "offering_name": o.Name,
		"user_uuid": u.UUID, "user_username": u.Username, "user_full_name": u.FullName,
		"user_first_name": first, "user_last_name": last, "user_email": u.Email,
		"user_phone_number": "", "user_organization": "", "user_job_title": "", "user_affiliations": []any{},
		"user_gender": nil, "user_civil_number": nil, "user_birth_date": nil, "user_identity_source": "",
		"user_personal_title": "", "user_place_of_birth": "", "user_country_of_residence": "",
		"user_nationality": "", "user_nationalities": []any{}, "user_organization_country": "",
		"user_organization_type": "", "user_organization_registry_code": "",
		"user_eduperson_assurance": []any{}, "user_active_isds": []any{},
		"created": ts(ou.Created), "modified": ts(ou.Modified),
		"customer_uuid": cust.UUID, "customer_name": cust.Name,
		"is_restricted": ou.IsRestricted, "state": ou.State,
		"service_provider_comment": ou.Comment, "service_provider_comment_url": ou.CommentURL,
		"has_consent": true, "requires_reconsent": false, "has_compliance_checklist": false,
		"consent_data": nil, "is_profile_complete": true, "missing_profile_attributes": []any{},
	}
}

// renderTeam lists the users with a role in the resource's project, with their offering user
// for the resource's offering (ProjectUser).
func (st *state) renderTeam(c *call, r *Resource) []map[string]any {
	var out []map[string]any
	for _, u := range st.users.all() {
		role, member := st.members[r.ProjectUUID][u.UUID]
		if !member {
			continue
		}
		m := map[string]any{
			"url": c.url("users/" + u.UUID + "/"), "uuid": u.UUID, "username": u.Username,
			"full_name": u.FullName, "email": u.Email, "role": role, "expiration_time": nil,
			"offering_user_username": nil, "offering_user_state": nil,
		}
		if ou := st.offeringUserOf(r.OfferingUUID, u.UUID); ou != nil {
			m["offering_user_username"], m["offering_user_state"] = orNull(ou.Username), ou.State
		}
		out = append(out, m)
	}
	return out
}

func (st *state) offeringUserOf(offeringUUID, userUUID string) *OfferingUser {
	for _, ou := range st.offeringUsers.all() {
		if ou.OfferingUUID == offeringUUID && ou.UserUUID == userUUID {
			return ou
		}
	}
	return nil
}

func (st *state) renderServiceProvider(c *call, sp *ServiceProvider) map[string]any {
	cust, _ := st.customers.get(sp.CustomerUUID)
	if cust == nil {
		cust = &Customer{UUID: sp.CustomerUUID}
	}
	count := 0
	for _, o := range st.offerings.all() {
		if o.CustomerUUID == sp.CustomerUUID {
			count++
		}
	}
	return map[string]any{
		"url": c.url("marketplace-service-providers/" + sp.UUID + "/"), "uuid": sp.UUID,
		"created": ts(time.Unix(0, 0)), "description": "", "enable_notifications": true,
		"customer": c.url("customers/" + cust.UUID + "/"), "customer_uuid": cust.UUID,
		"customer_name": cust.Name, "customer_slug": cust.Slug, "customer_abbreviation": "",
		"customer_native_name": "", "customer_country": "", "customer_image": "", "image": nil,
		"organization_groups": []any{}, "offering_count": count,
	}
}

func renderKey(c *call, k *SSHKey) map[string]any {
	md5sum, sha256sum, sha512sum := fingerprints(k.PublicKey)
	keyType, _, _ := strings.Cut(k.PublicKey, " ")
	return map[string]any{
		"url": c.url("keys/" + k.UUID + "/"), "uuid": k.UUID, "name": k.Name, "public_key": k.PublicKey,
		"fingerprint_md5": md5sum, "fingerprint_sha256": sha256sum, "fingerprint_sha512": sha512sum,
		"user_uuid": k.UserUUID, "is_shared": false, "type": keyType,
	}
}

// fingerprints computes OpenSSH-style fingerprints of a public key line ("" if undecodable).
func fingerprints(publicKey string) (md5sum, sha256sum, sha512sum string) {
	fields := strings.Fields(publicKey)
	if len(fields) < 2 {
		return "", "", ""
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return "", "", ""
	}
	m := md5.Sum(blob)
	parts := make([]string, len(m))
	for i, b := range m {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	s256, s512 := sha256.Sum256(blob), sha512.Sum512(blob)
	return strings.Join(parts, ":"),
		"SHA256:" + base64.RawStdEncoding.EncodeToString(s256[:]),
		"SHA512:" + base64.RawStdEncoding.EncodeToString(s512[:])
}

func (st *state) renderServiceAccount(c *call, a *ServiceAccount) map[string]any {
	sc := st.scopeOf("", a.ProjectUUID, "")
	return map[string]any{
		"url": c.url("marketplace-project-service-accounts/" + a.UUID + "/"), "uuid": a.UUID,
		"created": ts(time.Unix(0, 0)), "modified": ts(time.Unix(0, 0)),
		"username": a.Username, "description": "", "error_message": "", "error_traceback": "",
		"state": a.State, "token": nil, "email": a.Email, "expires_at": nil, "preferred_identifier": "",
		"project": a.ProjectUUID, "project_uuid": a.ProjectUUID, "project_name": sc.project.Name,
		"customer_uuid": sc.customer.UUID, "customer_name": sc.customer.Name, "customer_abbreviation": "",
	}
}

func (st *state) renderCourseAccount(c *call, a *CourseAccount) map[string]any {
	sc := st.scopeOf("", a.ProjectUUID, "")
	end := sc.project.EndDate
	if end == "" {
		end = "2099-12-31" // course projects always have an end date in Waldur
	}
	return map[string]any{
		"url": c.url("marketplace-course-accounts/" + a.UUID + "/"), "uuid": a.UUID,
		"created": ts(time.Unix(0, 0)), "modified": ts(time.Unix(0, 0)),
		"project": a.ProjectUUID, "project_uuid": a.ProjectUUID, "project_name": sc.project.Name,
		"project_slug": sc.project.Slug, "project_start_date": "1970-01-01", "project_end_date": end,
		"user_uuid": a.UserUUID, "username": a.Username,
		"customer_uuid": sc.customer.UUID, "customer_name": sc.customer.Name,
		"state": a.State, "email": a.Email, "description": "", "error_message": "", "error_traceback": "",
	}
}

// defaultExposedFields is Waldur's default user-attribute config.
var defaultExposedFields = []string{"username", "full_name", "email"}

func renderAttributeConfig(o *Offering) map[string]any {
	fields, isDefault := o.ExposedFields, o.ExposedFields == nil
	if isDefault {
		fields = defaultExposedFields
	}
	m := map[string]any{
		"uuid": derivedUUID(o.UUID, 100), "created": ts(time.Unix(0, 0)), "modified": ts(time.Unix(0, 0)),
		"offering_uuid": o.UUID, "offering_name": o.Name, "is_default": isDefault,
	}
	exposed := make([]any, 0, len(fields))
	for _, f := range fields {
		m["expose_"+f] = true
		exposed = append(exposed, f)
	}
	m["exposed_fields"] = exposed
	return m
}
