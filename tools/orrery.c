/* orrery - the command-line front door (placeholder until predict lands). */
#include <stdio.h>
int main(void)
{
    puts("orrery: not built yet");
    return 0;
}
