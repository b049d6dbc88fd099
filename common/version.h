/* SPDX-License-Identifier: ISC */
/*
 * The one version string of migr: migrd, migctl and migr-inetd print it
 * for --version.  Bump it here and nowhere else.
 */
#ifndef MIGR_VERSION_H
#define MIGR_VERSION_H

#define MIGR_VERSION	"0.3.0"

#endif
