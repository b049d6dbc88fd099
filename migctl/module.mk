# migctl: see issue 5.
