# common: libmigr.a, what migrd, migctl and the tests share.
COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(BUILD)/%.o)
LIBMIGR     := $(BUILD)/common/libmigr.a
LIBS        += $(LIBMIGR)

$(LIBMIGR): $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^
