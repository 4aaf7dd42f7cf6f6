/* Fuzzes the HPCC ns-3 config reader of `orrery netsim` (src/net/packet/config.c). */
#include "fuzz.h"
#include "orrery/orrery.h"
#include "orrery/packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    orr_packet_config c;
    orr_packet_config_default(&c);
    orr_buf warn = {0};
    orr_err err;
    orr_packet_config_parse(&c, text, "config.txt", &warn, &err);
    orr_buf_free(&warn);
    free(text);
    return 0;
}
