import { describe, expect, it } from "vitest";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordChangeProblem } from "./password-policy.ts";

const change = (newPassword: string, confirmPassword = newPassword, currentPassword = "the-current-one") => ({
  currentPassword,
  newPassword,
  confirmPassword,
});

describe("passwordChangeProblem (what the account page says before asking the server)", () => {
  it("lets a new password of the minimum length or more through when it is confirmed", () => {
    expect(passwordChangeProblem(change("x".repeat(MIN_PASSWORD_LENGTH)))).toBeNull();
    expect(passwordChangeProblem(change("correct horse battery staple"))).toBeNull();
    expect(passwordChangeProblem(change("y".repeat(MAX_PASSWORD_LENGTH)))).toBeNull();
  });

  it("names each mistake", () => {
    expect(passwordChangeProblem(change("a-good-new-password", undefined, ""))).toBe("Enter your current password.");
    expect(passwordChangeProblem(change("x".repeat(MIN_PASSWORD_LENGTH - 1)))).toBe(
      `The new password needs at least ${MIN_PASSWORD_LENGTH} characters (it has ${MIN_PASSWORD_LENGTH - 1}).`,
    );
    expect(passwordChangeProblem(change("y".repeat(MAX_PASSWORD_LENGTH + 1)))).toMatch(/at most 128 characters/);
    expect(passwordChangeProblem(change("a-good-new-password", "a-good-new-passw0rd"))).toBe(
      "The new password and its confirmation do not match.",
    );
    expect(passwordChangeProblem(change("the-current-one"))).toMatch(/same as the current one/);
  });
});
